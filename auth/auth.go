// Package auth says who is calling: a bearer token (HS256 or a JWKS), or a
// browser session opened by signing in at the organization's OpenID
// provider (docs/contract.md §2, "Authentication", "Browser sign-in",
// "Anti-forgery").
//
// Sessions live in Redis (this package's key space, sessionstore.go),
// shared by every instance, so they end for real (logout, idle time,
// lifetime, `facade sessions revoke`); the cookie carries only a sealed
// random id. A sign-in in progress is a sealed cookie of its own per
// state, in the browser that started it.
//
// Each part stands alone and is built from its own settings: Sessions
// keeps the sessions and seals their cookies, SignIn is the relying party
// (login, callback, logout: each returns a Result the HTTP layer writes),
// CheckXSRF is the anti-forgery rule, SameOrigin decides whether a request
// may use the session cookie at all. The HTTP layer (package server)
// mounts them and turns their errors into problem bodies.
package auth

import (
	"context"
	"time"

	"github.com/facade-dev/facade"
)

// How a caller was authenticated, as /auth/me reports it.
const (
	ViaSession = "session"
	ViaBearer  = "bearer"
)

// Identity is an authenticated caller: the principal, until when the
// credential holds, and how it was presented.
type Identity struct {
	Principal facade.Principal
	ExpiresAt time.Time
	Via       string
	// xsrf is the anti-forgery token issued with a session (empty for
	// bearer tokens): an unsafe request on the session must present it.
	xsrf string
}

// XSRFToken is the anti-forgery token issued with the session (empty for
// a bearer token): /auth/me hands it to the page, which sends it back in
// X-XSRF-TOKEN instead of reading a cookie another site could plant.
func (id Identity) XSRFToken() string { return id.xsrf }

type identityKey struct{}

// WithIdentity returns a context carrying id and its principal (so
// facade.PrincipalFrom sees it too).
func WithIdentity(ctx context.Context, id Identity) context.Context {
	return facade.WithPrincipal(context.WithValue(ctx, identityKey{}, id), id.Principal)
}

// IdentityFrom returns the identity in ctx, if any.
func IdentityFrom(ctx context.Context) (Identity, bool) {
	switch id := ctx.Value(identityKey{}).(type) {
	case Identity:
		return id, true
	case *Identity: // IdentityValue's
		return *id, true
	}
	return Identity{}, false
}

// IdentityValue answers a context's Value for WithIdentity's key with id,
// for a context type that holds the identity in place (package server's
// per-request context, one allocation for all of a request's values); ok
// is false for any other key, and when id is nil (not authenticated yet:
// the context answers as its parent would). The principal is the
// facade.Scope's, which the same context holds.
func IdentityValue(key any, id *Identity) (v any, ok bool) {
	if _, mine := key.(identityKey); mine && id != nil {
		return id, true
	}
	return nil, false
}
