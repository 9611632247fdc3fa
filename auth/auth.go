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
