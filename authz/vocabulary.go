package authz

import (
	"fmt"
	"slices"
	"strings"
)

// The vocabulary of the service's questions (docs/policy.md): what policy
// check accepts in a line, and what the tools tell apart.

// Object prefixes of the questions the service asks (docs/policy.md).
// Request objects are always built by this package from identifiers the
// caller parsed (facade.AccountID, ...), whose format admits no prefix,
// separator or wildcard, so a caller can never smuggle one into a question.
const (
	PrefixClass   = "class:"
	PrefixAccount = "account:"
	PrefixProject = "project:"
	PrefixPlan    = "plan:"
	PrefixStudent = "student:"
)

// Actions the service asks about.
const (
	ActView        = "view"
	ActUpdate      = "update"
	ActPost        = "post" // releases a class's grades to their students (docs/contract.md §4)
	ActViewAccount = "view_account"
	ActTransfer    = "transfer"
	ActReceive     = "receive" // may pay into the account, never take from it
)

// actionsFor lists, per object prefix, the actions the service asks about it.
var actionsFor = map[string][]string{
	PrefixClass:   {ActView, ActUpdate, ActPost},
	PrefixStudent: {ActView, ActUpdate},
	PrefixAccount: {ActViewAccount, ActTransfer, ActReceive},
	PrefixProject: {ActView},
	PrefixPlan:    {ActView},
}

// actions are the actions the service asks about.
var actions = []string{ActView, ActUpdate, ActPost, ActViewAccount, ActTransfer, ActReceive}

// UnknownAction says, for an action the service never asks about (a typo,
// most likely), which one it asks instead; "" for one it asks about.
// `policy check` refuses a line with such an action unless the matcher
// names it, and `policy explain` notes it.
func UnknownAction(act string) string {
	if slices.Contains(actions, act) {
		return ""
	}
	return fmt.Sprintf("unknown action %q%s: the service asks for %s", act, Suggest(act, actions), strings.Join(actions, ", "))
}

// Suggest names the one of among that act is most likely a typo of, if
// any is within two edits: ` (did you mean "view"?)`, or "".
func Suggest(act string, among []string) string {
	best, dist := "", 3
	for _, a := range among {
		if d := editDistance(act, a); d < dist {
			best, dist = a, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// editDistance is Levenshtein's distance between a and b, counting an
// adjacent swap as one edit ("veiw" is one from "view").
func editDistance(a, b string) int {
	prev2, prev, cur := make([]int, len(b)+1), make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// ObjectKind returns the object's prefix ("" for a wildcard that names
// none, like "*"), and whether the object is one the service can ask about.
func ObjectKind(obj string) (string, bool) {
	for _, p := range []string{PrefixClass, PrefixAccount, PrefixProject, PrefixPlan, PrefixStudent} {
		if strings.HasPrefix(obj, p) {
			return p, true
		}
	}
	if strings.ContainsAny(obj, "*?[{") {
		return "", true
	}
	return "", false
}

func actionFits(kind, act string) bool {
	for _, a := range actionsFor[kind] {
		if a == act {
			return true
		}
	}
	return false
}
