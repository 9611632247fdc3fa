package authz

import (
	"slices"
	"strings"

	facade "github.com/facade-dev/facade"
)

// prefixRole names a role the policy gives: "g, <subject or group:G>,
// role:<R>" gives role R as if the principal's token said so, for
// providers that send no role claim (Dex, many Keycloak and Okta set-ups):
// "g, group:english-graders, role:professor".
const prefixRole = "role:"

// roleIndex is, for every name that reaches some role:R through the g
// lines (ptype g, within the maxDepth links casbin's role manager
// follows), the roles it reaches and how many links away: casbin's
// HasLink(name, "role:R") is true exactly when that is at most maxDepth.
type roleIndex map[string]map[string]int

// newRoleIndex walks the g links backwards from each role:R the policy
// names, breadth first, so the depth kept is the shortest path's.
func newRoleIndex(rules []rule) roleIndex {
	members := map[string][]string{} // group -> its direct members
	var roles []string
	for _, r := range rules {
		if r.ptype != groupRole || len(r.fields) != 2 {
			continue
		}
		members[r.fields[1]] = append(members[r.fields[1]], r.fields[0])
		if strings.HasPrefix(r.fields[1], prefixRole) && !slices.Contains(roles, r.fields[1]) {
			roles = append(roles, r.fields[1])
		}
	}
	ix := roleIndex{}
	for _, role := range roles {
		name := strings.TrimPrefix(role, prefixRole)
		seen := map[string]bool{role: true}
		level := []string{role}
		for depth := 1; depth <= maxDepth && len(level) > 0; depth++ {
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

// hasRole reports whether p has role: its token's, or one the policy
// gives its id or one of its token groups (a group is one link from the
// principal, so what it reaches counts one link more). A principal whose
// id has a colon (shaped like a group or an object, which the matcher's
// guard refuses) gets no role from the policy.
func (st *state) hasRole(p facade.Principal, role string) bool {
	if p.HasTokenRole(role) {
		return true
	}
	if p.ID == "" || strings.Contains(p.ID, ":") || len(st.roles) == 0 {
		return false
	}
	return st.policyRole(subjectOf(p), role)
}

// policyRole is hasRole's look-up in the policy, for q made by subjectOf.
func (st *state) policyRole(q subject, role string) bool {
	if q.id == "" || strings.Contains(q.id, ":") || len(st.roles) == 0 {
		return false
	}
	if d, ok := st.roles[q.id][role]; ok && d <= maxDepth {
		return true
	}
	for _, g := range q.groups {
		if d, ok := st.roles[g][role]; ok && d+1 <= maxDepth {
			return true
		}
	}
	return false
}

// rolesOf lists p's roles, its token's and the policy's, sorted.
func (st *state) rolesOf(p facade.Principal) []string {
	out := slices.Clone(p.TokenRoles())
	for _, name := range append([]string{p.ID}, subjectOf(p).groups...) {
		for r := range st.roles[name] {
			if st.hasRole(p, r) && !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
	}
	return sortedStrings(out)
}

// Roles returns p's roles under the policy in force: its token's role and
// those the policy gives it (g, <sub or group:G>, role:<R>), sorted. The
// grade rules read these, so does whatever shows a person what they are.
func (a *Authorizer) Roles(p facade.Principal) []string { return a.state().rolesOf(p) }
