package auth

import (
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gorilla/securecookie"

	"github.com/facade-dev/facade"
)

// Cookie names (docs/contract.md §2, "Browser sign-in"). With Secure
// cookies the session and sign-in cookies carry the __Host- prefix: the
// browser then refuses them from any other host (a sibling subdomain
// cannot plant one) and requires Secure, Path=/ and no Domain. XSRFCookie
// keeps Angular's name, which pages and clients already know.
const (
	XSRFCookie = "XSRF-TOKEN"
	XSRFHeader = "X-XSRF-TOKEN"

	sessionName = "facade-session"
	flowName    = "facade-signin"
	hostPrefix  = "__Host-"
)

// DefaultSessionLifetime is FACADE_SESSION_LIFETIME's default.
const DefaultSessionLifetime = 8 * time.Hour

// flowLifetime bounds a sign-in in progress: from /auth/login to the
// callback, the time a person needs at the provider's page.
const flowLifetime = 10 * time.Minute

// cookieGrace keeps an expired session's cookie in the browser a while, so
// that the service can answer session-expired (sign in again) rather than
// token-missing.
const cookieGrace = 12 * time.Hour

// SessionConfig is what Sessions needs.
type SessionConfig struct {
	// Keys are FACADE_SESSION_KEYS, 32 bytes each (ParseKeys): the first
	// seals, every one opens, so a new key goes first and an old one
	// stays until the sessions it sealed have expired.
	Keys [][]byte
	// Lifetime is a session's longest life (FACADE_SESSION_LIFETIME); zero
	// means DefaultSessionLifetime.
	Lifetime time.Duration
	// Secure marks cookies Secure with the __Host- prefix; false only for
	// a public URL that is plain http on loopback (SecureCookies).
	Secure bool
	// Now is the clock sessions expire by; nil means time.Now.
	Now func() time.Time
}

// Sessions seals and opens the session and sign-in cookies: encrypted
// (AES-256) and authenticated (HMAC-SHA256) by gorilla/securecookie, with
// keys derived from each FACADE_SESSION_KEYS entry. Nothing is kept on the
// server.
type Sessions struct {
	codecs   []securecookie.Codec
	lifetime time.Duration
	secure   bool
	now      func() time.Time
}

// session is what a session cookie holds: the principal, not the
// provider's tokens (they would not fit in 4 KiB with a long groups list),
// except the ID token as a logout hint when it fits.
type session struct {
	Sub     string   `json:"sub"`
	Role    string   `json:"role,omitempty"`
	Groups  []string `json:"groups,omitempty"`
	Expires int64    `json:"exp"`
	// XSRF is this session's anti-forgery token, random per sign-in: the
	// XSRF-TOKEN cookie carries it for the page, and an unsafe request on
	// the session must send it back (CheckXSRF).
	XSRF    string `json:"xsrf"`
	IDToken string `json:"idt,omitempty"`
}

// NewSessions checks cfg.
func NewSessions(cfg SessionConfig) (*Sessions, error) {
	if len(cfg.Keys) == 0 {
		return nil, configError("FACADE_SESSION_KEYS is required with FACADE_OIDC_ISSUER")
	}
	if cfg.Lifetime <= 0 {
		cfg.Lifetime = DefaultSessionLifetime
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Sessions{lifetime: cfg.Lifetime, secure: cfg.Secure, now: cfg.Now}
	for _, k := range cfg.Keys {
		if len(k) != 32 {
			return nil, configError("FACADE_SESSION_KEYS entries must be 32 bytes each")
		}
		c := securecookie.New(derive(k, "facade session hmac"), derive(k, "facade session aes"))
		// Expiry is ours to check, on the injected clock; securecookie's own
		// would read the machine's.
		c.MaxAge(0)
		c.SetSerializer(securecookie.JSONEncoder{})
		s.codecs = append(s.codecs, c)
	}
	return s, nil
}

// derive gives each use of a configured key its own key (HKDF-SHA256), so
// the MAC and the cipher never share one.
func derive(key []byte, use string) []byte {
	k, err := hkdf.Key(sha256.New, key, nil, use, 32)
	if err != nil {
		panic(err) // only for lengths HKDF-SHA256 cannot produce; 32 is not one
	}
	return k
}

// ParseKeys reads FACADE_SESSION_KEYS: base64 (standard or URL alphabet,
// padded or not) of 32 bytes each.
func ParseKeys(list []string) ([][]byte, error) {
	var keys [][]byte
	for i, v := range list {
		k, err := decodeBase64(v)
		if err != nil || len(k) != 32 {
			return nil, configError(fmt.Sprintf("FACADE_SESSION_KEYS entry %d must be base64 of 32 bytes (e.g. from openssl rand -base64 32)", i+1))
		}
		keys = append(keys, k)
	}
	return keys, nil
}

func decodeBase64(v string) ([]byte, error) {
	v = strings.TrimRight(v, "=")
	if k, err := base64.RawStdEncoding.DecodeString(v); err == nil {
		return k, nil
	}
	return base64.RawURLEncoding.DecodeString(v)
}

// SecureCookies reports whether cookies for publicURL must be Secure: all
// but plain http on a loopback host (a developer's machine, the demo).
func SecureCookies(scheme, host string) bool {
	if scheme == "https" {
		return true
	}
	return !isLoopback(host)
}

func isLoopback(host string) bool {
	return host == "localhost" || host == "127.0.0.1" || host == "::1" || host == "[::1]"
}

func (s *Sessions) cookieName(name string) string {
	if s.secure {
		return hostPrefix + name
	}
	return name
}

// SessionCookie is the session cookie's name under this configuration.
func (s *Sessions) SessionCookie() string { return s.cookieName(sessionName) }

// issue starts a new session for p that ends at the earlier of the
// configured lifetime and notAfter (the ID token's expiry), with a fresh
// anti-forgery token: a session someone planted before sign-in is never
// continued (session fixation).
func (s *Sessions) issue(w http.ResponseWriter, p facade.Principal, notAfter time.Time, idToken string) (session, error) {
	now := s.now()
	exp := now.Add(s.lifetime)
	if !notAfter.IsZero() && notAfter.Before(exp) {
		exp = notAfter
	}
	ss := session{Sub: p.ID, Role: p.Role, Groups: p.Groups, Expires: exp.Unix(), XSRF: randomToken(), IDToken: idToken}
	v, err := securecookie.EncodeMulti(sessionName, ss, s.codecs...)
	if err != nil && ss.IDToken != "" {
		// Too long with the ID token in it: keep the claims, lose only the
		// logout hint (the provider's logout then asks the person).
		ss.IDToken = ""
		v, err = securecookie.EncodeMulti(sessionName, ss, s.codecs...)
	}
	if err != nil {
		return session{}, err
	}
	maxAge := exp.Sub(now) + cookieGrace
	http.SetCookie(w, s.cookie(sessionName, v, maxAge, true))
	http.SetCookie(w, s.xsrfCookie(ss.XSRF, maxAge))
	return ss, nil
}

// cookie builds one of our cookies with the attributes of docs/contract.md
// §2: HttpOnly, SameSite=Lax (sent on the provider's redirect back, a
// top-level navigation, but not on other sites' requests), Path=/, and
// Secure with the __Host- prefix unless on plain-http loopback.
func (s *Sessions) cookie(name, value string, maxAge time.Duration, httpOnly bool) *http.Cookie {
	c := &http.Cookie{
		Name: s.cookieName(name), Value: value, Path: "/",
		HttpOnly: httpOnly, Secure: s.secure, SameSite: http.SameSiteLaxMode,
		MaxAge: int(maxAge / time.Second),
	}
	if maxAge < 0 {
		c.MaxAge = -1
	}
	return c
}

// xsrfCookie is readable by the page's script, which copies it into the
// X-XSRF-TOKEN header. No prefix: pages and clients know it by this name.
func (s *Sessions) xsrfCookie(value string, maxAge time.Duration) *http.Cookie {
	c := s.cookie(XSRFCookie, value, maxAge, false)
	c.Name = XSRFCookie
	return c
}

// clear removes the session and its XSRF-TOKEN cookie.
func (s *Sessions) clear(w http.ResponseWriter) {
	http.SetCookie(w, s.cookie(sessionName, "", -1, true))
	http.SetCookie(w, s.xsrfCookie("", -1))
}

// Open reads the request's session cookie. ok is false when there is none;
// an error is facade.ErrSessionInvalid (it does not open with any
// configured key) or facade.ErrSessionExpired.
func (s *Sessions) Open(r *http.Request) (id Identity, ok bool, err error) {
	c, err := r.Cookie(s.SessionCookie())
	if err != nil {
		return Identity{}, false, nil
	}
	var ss session
	if err := securecookie.DecodeMulti(sessionName, c.Value, &ss, s.codecs...); err != nil || !usableName(ss.Sub) {
		return Identity{}, true, facade.ErrSessionInvalid
	}
	exp := time.Unix(ss.Expires, 0)
	if !s.now().Before(exp) {
		return Identity{}, true, facade.ErrSessionExpired
	}
	p := facade.Principal{ID: ss.Sub, Role: ss.Role, Groups: ss.Groups}
	return Identity{Principal: p, ExpiresAt: exp, Via: ViaSession, xsrf: ss.XSRF}, true, nil
}

// idTokenHint returns the ID token kept in the request's session, if any,
// for the provider's logout. The session need not be current.
func (s *Sessions) idTokenHint(r *http.Request) string {
	c, err := r.Cookie(s.SessionCookie())
	if err != nil {
		return ""
	}
	var ss session
	if securecookie.DecodeMulti(sessionName, c.Value, &ss, s.codecs...) != nil {
		return ""
	}
	return ss.IDToken
}

// flow is a sign-in in progress, kept in its own short-lived sealed cookie
// bound to the browser that started it: the callback accepts only the
// state this browser was sent with (login CSRF), and the nonce and PKCE
// verifier never leave the service unsealed.
type flow struct {
	State    string `json:"state"`
	Nonce    string `json:"nonce"`
	Verifier string `json:"verifier"`
	ReturnTo string `json:"return_to"`
	Expires  int64  `json:"exp"`
}

func (s *Sessions) startFlow(w http.ResponseWriter, f flow) error {
	f.Expires = s.now().Add(flowLifetime).Unix()
	v, err := securecookie.EncodeMulti(flowName, f, s.codecs...)
	if err != nil {
		return err
	}
	http.SetCookie(w, s.cookie(flowName, v, flowLifetime, true))
	return nil
}

var errNoFlow = errors.New("no sign-in in progress in this browser")

// takeFlow opens the request's sign-in cookie and removes it: a flow is
// used once, whatever the outcome.
func (s *Sessions) takeFlow(w http.ResponseWriter, r *http.Request) (flow, error) {
	c, err := r.Cookie(s.cookieName(flowName))
	if err != nil {
		return flow{}, errNoFlow
	}
	http.SetCookie(w, s.cookie(flowName, "", -1, true))
	var f flow
	if err := securecookie.DecodeMulti(flowName, c.Value, &f, s.codecs...); err != nil {
		return flow{}, err
	}
	if !s.now().Before(time.Unix(f.Expires, 0)) {
		return flow{}, errors.New("the sign-in took too long")
	}
	return f, nil
}

// randomToken is 32 random bytes, base64url: state, nonce, XSRF tokens.
func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b)
}

type configError string

func (e configError) Error() string { return string(e) }
