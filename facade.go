// Package facade holds the domain types every other package shares: who is
// asking (Principal) and how a refusal or failure is described (Error).
//
// Around it, each package owns one domain or one dependency: grades/,
// accounts/ and authz/ the rules, upstream/ the Bamboo client, cache/ the
// shared response cache, proxy/ the build-result handlers built on those
// three, server/ the HTTP layer that wires everything, cmd/facade the
// binary. They share these types and the identifier formats of ids.go, and
// no package touches another's Redis keys.
package facade

import (
	"strconv"
	"strings"
)

// Roles that carry built-in grade rules (docs/contract.md §3). Any other role
// string is valid and simply reaches accounts and builds through the policy.
const (
	RoleStudent   = "student"
	RoleProfessor = "professor"
)

// Principal is the authenticated caller. The zero value is an anonymous
// principal with no role; it is never allowed anything.
type Principal struct {
	ID string // the token's sub
	// Role is the token's role (its role claim; may be empty). When the
	// claim is a list, Role is the first role of it the grade rules know
	// and Roles holds them all; Role stays the one name older clients
	// read (/auth/me's "role").
	Role string
	// Roles are the token's roles when its role claim is a list (Keycloak's
	// realm_access.roles): each that the grade rules know (RoleStudent,
	// RoleProfessor), in the token's order. Nil for a single role, which is
	// Role alone. TokenRoles reads both.
	Roles []string
	// Groups are the group names the token or sign-in carries (its groups
	// claim). Authorization treats the principal as a member of
	// group:<name> for each, exactly as casbin does with a policy line
	// "g, <ID>, group:<name>" added; a name that is not ValidGroupName is
	// ignored (it grants nothing). Names are compared whole, so a group can
	// never make a token some other subject.
	Groups []string
	// GroupsIncomplete says the provider had more groups for the principal
	// than fit in the token (Microsoft Entra's overage: _claim_names
	// instead of groups): Groups is then empty, so group grants could not
	// be checked, and the person and ops are told so.
	GroupsIncomplete bool
}

// TokenRoles are p's roles from its token: Roles, or Role alone.
func (p Principal) TokenRoles() []string {
	if len(p.Roles) > 0 {
		return p.Roles
	}
	if p.Role != "" {
		return []string{p.Role}
	}
	return nil
}

// HasTokenRole reports whether p's token gives it role (never "").
func (p Principal) HasTokenRole(role string) bool {
	if role == "" {
		return false
	}
	if p.Role == role {
		return true
	}
	for _, r := range p.Roles {
		if r == role {
			return true
		}
	}
	return false
}

// PrincipalKey is a Principal as a comparable value, for cache keys: two
// principals with equal keys are authorized alike. Groups are spelled
// length-prefixed, so no group name can make two different lists look the
// same.
type PrincipalKey struct {
	ID, Role, Roles, Groups string
	GroupsIncomplete        bool
}

// Key returns p's PrincipalKey.
func (p Principal) Key() PrincipalKey {
	return PrincipalKey{ID: p.ID, Role: p.Role, Roles: joinKey(p.Roles), Groups: joinKey(p.Groups), GroupsIncomplete: p.GroupsIncomplete}
}

// joinKey spells names length-prefixed ("5:alice3:bob").
func joinKey(names []string) string {
	var b strings.Builder
	for _, g := range names {
		b.WriteString(strconv.Itoa(len(g)))
		b.WriteByte(':')
		b.WriteString(g)
	}
	return b.String()
}

// splitKey reads what joinKey wrote.
func splitKey(s string) []string {
	var out []string
	for rest := s; rest != ""; {
		n, after, _ := strings.Cut(rest, ":")
		size, err := strconv.Atoi(n)
		if err != nil || size > len(after) {
			break // not made by Key
		}
		out = append(out, after[:size])
		rest = after[size:]
	}
	return out
}

// Principal returns the Principal k was made from.
func (k PrincipalKey) Principal() Principal {
	return Principal{ID: k.ID, Role: k.Role, Roles: splitKey(k.Roles), Groups: splitKey(k.Groups), GroupsIncomplete: k.GroupsIncomplete}
}
