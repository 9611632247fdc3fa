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
	ID   string // the token's sub
	Role string // from the configured role claim; may be empty
	// Groups are the group names the token or sign-in carries (its groups
	// claim). Authorization treats the principal as a member of
	// group:<name> for each, exactly as casbin does with a policy line
	// "g, <ID>, group:<name>" added; a name that is not ValidGroupName is
	// ignored (it grants nothing). Names are compared whole, so a group can
	// never make a token some other subject.
	Groups []string
}

// PrincipalKey is a Principal as a comparable value, for cache keys: two
// principals with equal keys are authorized alike. Groups are spelled
// length-prefixed, so no group name can make two different lists look the
// same.
type PrincipalKey struct{ ID, Role, Groups string }

// Key returns p's PrincipalKey.
func (p Principal) Key() PrincipalKey {
	var b strings.Builder
	for _, g := range p.Groups {
		b.WriteString(strconv.Itoa(len(g)))
		b.WriteByte(':')
		b.WriteString(g)
	}
	return PrincipalKey{ID: p.ID, Role: p.Role, Groups: b.String()}
}

// Principal returns the Principal k was made from.
func (k PrincipalKey) Principal() Principal {
	p := Principal{ID: k.ID, Role: k.Role}
	for rest := k.Groups; rest != ""; {
		n, after, _ := strings.Cut(rest, ":")
		size, err := strconv.Atoi(n)
		if err != nil || size > len(after) {
			break // not made by Key
		}
		p.Groups = append(p.Groups, after[:size])
		rest = after[size:]
	}
	return p
}
