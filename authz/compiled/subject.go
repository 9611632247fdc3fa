package compiled

import (
	"slices"

	facade "github.com/facade-dev/facade"
)

// GroupPrefix names the groups a principal carries in its token or
// sign-in: a principal with Groups ["devs"] is a member of group:devs.
const GroupPrefix = "group:"

// GroupRole is the role definition the token's memberships belong to:
// the decision is casbin's on the same files with "g, <sub>, group:<name>"
// added. A model without g has nowhere to put them, and they grant nothing.
const GroupRole = "g"

// Subject is who asks casbin's question: the principal's id and the
// groups it carries, as the policy names them (group:<name>), each valid
// and listed once.
type Subject struct {
	ID     string
	Groups []string
}

// SubjectOf is the subject of p's questions. A group name that is not
// facade.ValidGroupName (a control character, over 256 characters) is
// left out: it grants nothing. Every other name is group:<name> whole,
// compared whole with the policy's subjects: a name with commas is not a
// list, "acme:payments" is not group:acme, and a name with '*' is no
// pattern (the role definitions the service decides have no matching
// function).
func SubjectOf(p facade.Principal) Subject { return SubjectWith(p.ID, p.Groups) }

func SubjectWith(id string, names []string) Subject {
	s := Subject{ID: id}
	var seen map[string]bool // past a few names, a set: 200 Entra groups are not 20,000 compares
	if len(names) > 8 {
		seen = make(map[string]bool, len(names))
	}
	for _, n := range names {
		if !facade.ValidGroupName(n) {
			continue
		}
		g := GroupPrefix + n
		switch {
		case seen != nil && seen[g], seen == nil && slices.Contains(s.Groups, g):
			continue
		case seen != nil:
			seen[g] = true
		}
		s.Groups = append(s.Groups, g)
	}
	return s
}

// memberships are the policy lines casbin would need to decide as the
// service does for s: "g, <id>, group:<name>" per group.
func (s Subject) memberships() [][]string {
	rules := make([][]string, len(s.Groups))
	for i, g := range s.Groups {
		rules[i] = []string{s.ID, g}
	}
	return rules
}
