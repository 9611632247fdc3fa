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
	"context"
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
	// ignored (it grants nothing), so a group can never make a token some
	// other subject.
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

type principalKey struct{}

// WithPrincipal returns a context that carries p.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom returns the principal stored in ctx, or the zero Principal.
func PrincipalFrom(ctx context.Context) Principal {
	switch p := ctx.Value(principalKey{}).(type) {
	case Principal:
		return p
	case *Principal: // a Scope's
		return *p
	}
	return Principal{}
}

type requestIDKey struct{}

// WithRequestID returns a context that carries the request's id, so log
// lines written deep in a store can name the request they belong to.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestIDFrom returns the request id in ctx, or "".
func RequestIDFrom(ctx context.Context) string {
	switch id := ctx.Value(requestIDKey{}).(type) {
	case string:
		return id
	case *string: // a Scope's
		return *id
	}
	return ""
}

// Scope holds a request's id and principal in place, for a context type
// that carries all of a request's values in one allocation and fills them
// in as the request advances (package server's per-request context),
// where WithRequestID and WithPrincipal cost a context, a boxed value and
// a copy of the http.Request each.
type Scope struct {
	ID        string
	Principal Principal
}

// ScopeValue answers a context's Value for the keys of WithRequestID and
// WithPrincipal from s; ok is false for any other key, and for a field
// not set yet (the context then answers as its parent would).
func ScopeValue(key any, s *Scope) (v any, ok bool) {
	switch key.(type) {
	case principalKey:
		if s.Principal.ID != "" {
			return &s.Principal, true
		}
	case requestIDKey:
		if s.ID != "" {
			return &s.ID, true
		}
	}
	return nil, false
}
