package authz

import (
	"strings"

	facade "github.com/facade-dev/facade"
)

// Object prefixes (SPEC section 3). Request objects are always built by this
// package from validated identifiers, so a caller can never smuggle a prefix,
// a separator or a second object into a decision.
const (
	prefixClass   = "class:"
	prefixAccount = "account:"
	prefixProject = "project:"
	prefixPlan    = "plan:"
	prefixStudent = "student:"

	// prefixUser namespaces principals in the role graph: the policy's bare
	// "bob" and a token whose sub is "bob" are both the node "user:bob", so a
	// token whose sub is "team:platform" is not the team.
	prefixUser = "user:"
)

// Actions a policy line may grant.
const (
	actView        = "view"
	actUpdate      = "update"
	actViewAccount = "view_account"
	actTransfer    = "transfer"
)

// actionsFor lists, per object prefix, the actions that mean something on it.
var actionsFor = map[string][]string{
	prefixClass:   {actView, actUpdate},
	prefixAccount: {actViewAccount, actTransfer},
	prefixProject: {actView},
	prefixPlan:    {actView},
}

// reservedKinds may not be used as group kinds: they name objects,
// enrolled students, or the principal namespace.
var reservedKinds = map[string]bool{
	"class": true, "account": true, "project": true, "plan": true,
	"student": true, "user": true,
}

// validPrincipal reports whether s can name a principal in policy.csv: 1-128
// of [A-Za-z0-9._@|+=/-]. That covers user names, e-mail addresses, UUIDs
// and "provider|id" subjects; a colon is left out because "kind:name" marks
// a group.
func validPrincipal(s string) bool {
	if len(s) < 1 || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isAlnum(c) && !strings.ContainsRune("._@|+=/-", rune(c)) {
			return false
		}
	}
	return true
}

// validGroup reports whether s is "kind:name", kind ^[a-z][a-z0-9_-]{0,31}$
// and not reserved, name an identifier (team:platform, group:graders).
func validGroup(s string) bool {
	kind, name, ok := strings.Cut(s, ":")
	if !ok || len(kind) < 1 || len(kind) > 32 || reservedKinds[kind] || kind[0] < 'a' || kind[0] > 'z' {
		return false
	}
	for i := 1; i < len(kind); i++ {
		c := kind[i]
		if !(c >= 'a' && c <= 'z') && !isDigit(c) && c != '_' && c != '-' {
			return false
		}
	}
	return facade.ValidID(name)
}

// splitPlan splits "K-P" into a valid project key and plan key.
func splitPlan(s string) (project, plan string, ok bool) {
	project, plan, ok = strings.Cut(s, "-")
	return project, plan, ok && facade.ValidProjectKey(project) && facade.ValidPlanKey(plan)
}

func isAlnum(c byte) bool { return c >= 'A' && c <= 'Z' || (c >= 'a' && c <= 'z') || isDigit(c) }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
