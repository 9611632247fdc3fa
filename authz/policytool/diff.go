package policytool

import (
	"fmt"
	"strings"
)

// Change is one decision that differs between two policies.
type Change struct {
	Sub, Obj, Act string
	Now           bool // the decision under the new policy
}

func (c Change) String() string {
	if c.Now {
		return fmt.Sprintf("+ allow %s %s %s", c.Sub, c.Obj, c.Act)
	}
	return fmt.Sprintf("- allow %s %s %s", c.Sub, c.Obj, c.Act)
}

// maxDiffQuestions bounds a diff: principals x objects x actions.
const maxDiffQuestions = 20_000_000

// Diff returns the decisions that change from old to new for every
// principal, object and action either policy mentions, each principal
// asked as the service decides for a token carrying roles (none: the
// roles the policy gives; Decide).
func Diff(old, new *Policy, roles []string) ([]Change, error) {
	s1, o1, a1 := old.names()
	s2, o2, a2 := new.names()
	var subs []string
	for _, s := range sortedSet(append(s1, s2...)) {
		if !strings.Contains(s, ":") {
			subs = append(subs, s)
		}
	}
	objs, acts := sortedSet(append(o1, o2...)), sortedSet(append(a1, a2...))
	if n := len(subs) * len(objs) * len(acts); n > maxDiffQuestions {
		return nil, fmt.Errorf("authz: %d questions to compare (over %d): diff smaller files", n, maxDiffQuestions)
	}
	var changes []Change
	for _, s := range subs {
		for _, o := range objs {
			for _, a := range acts {
				pr := principalWith(s, nil, roles)
				if was, now := old.Decide(pr, o, a), new.Decide(pr, o, a); was != now {
					changes = append(changes, Change{s, o, a, now})
				}
			}
		}
	}
	return changes, nil
}
