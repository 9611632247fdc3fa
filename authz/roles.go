package authz

import (
	"slices"
	"strings"

	facade "github.com/facade-dev/facade"
	"github.com/facade-dev/facade/authz/compiled"
)

// PrefixRole names a role the policy gives: "g, <subject or group:G>,
// role:<R>" gives role R as if the principal's token said so, for
// providers that send no role claim (Dex, many Keycloak and Okta set-ups):
// "g, group:english-graders, role:professor".
const PrefixRole = "role:"

// roleIndex is, for every name that reaches some role:R through the g
// lines (ptype g, within the MaxDepth links casbin's role manager
// follows), the roles it reaches and how many links away: casbin's
// HasLink(name, "role:R") is true exactly when that is at most MaxDepth.
type roleIndex map[string]map[string]int

// newRoleIndex walks the g links backwards from each role:R the policy
// names, breadth first, so the depth kept is the shortest path's.
func newRoleIndex(rules []compiled.Rule) roleIndex {
	members := map[string][]string{} // group -> its direct members
	var roles []string
	for _, r := range rules {
		if r.Type != compiled.GroupRole || len(r.Fields) != 2 {
			continue
		}
		members[r.Fields[1]] = append(members[r.Fields[1]], r.Fields[0])
		if strings.HasPrefix(r.Fields[1], PrefixRole) && !slices.Contains(roles, r.Fields[1]) {
			roles = append(roles, r.Fields[1])
		}
	}
	ix := roleIndex{}
	for _, role := range roles {
		name := strings.TrimPrefix(role, PrefixRole)
		seen := map[string]bool{role: true}
		level := []string{role}
		for depth := 1; depth <= compiled.MaxDepth && len(level) > 0; depth++ {
			var next []string
			for _, g := range level {
				for _, m := range members[g] {
					if seen[m] {
						continue
					}
					seen[m] = true
					if ix[m] == nil {
						ix[m] = map[string]int{}
					}
					ix[m][name] = depth
					next = append(next, m)
				}
			}
			level = next
		}
	}
	return ix
}

// HasRole reports whether p has role: its token's, or one the policy
// gives its id or one of its token groups (a group is one link from the
// principal, so what it reaches counts one link more). A principal whose
// id has a colon (shaped like a group or an object, which the matcher's
// guard refuses) gets no role from the policy.
func (st *Loaded) HasRole(p facade.Principal, role string) bool {
	if p.HasTokenRole(role) {
		return true
	}
	if p.ID == "" || strings.Contains(p.ID, ":") || len(st.roles) == 0 {
		return false
	}
	return st.policyRole(compiled.SubjectOf(p), role)
}

// policyRole is HasRole's look-up in the policy, for q made by
// compiled.SubjectOf.
func (st *Loaded) policyRole(q compiled.Subject, role string) bool {
	if q.ID == "" || strings.Contains(q.ID, ":") || len(st.roles) == 0 {
		return false
	}
	if d, ok := st.roles[q.ID][role]; ok && d <= compiled.MaxDepth {
		return true
	}
	for _, g := range q.Groups {
		if d, ok := st.roles[g][role]; ok && d+1 <= compiled.MaxDepth {
			return true
		}
	}
	return false
}

// Roles lists p's roles, its token's and the policy's, sorted.
func (st *Loaded) Roles(p facade.Principal) []string {
	out := slices.Clone(p.TokenRoles())
	for _, name := range append([]string{p.ID}, compiled.SubjectOf(p).Groups...) {
		for r := range st.roles[name] {
			if st.HasRole(p, r) && !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Roles returns p's roles under the policy in force: its token's role and
// those the policy gives it (g, <sub or group:G>, role:<R>), sorted. The
// grade rules read these, so does whatever shows a person what they are.
func (a *Authorizer) Roles(p facade.Principal) []string { return a.force.state().Roles(p) }
