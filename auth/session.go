package auth

import (
	"cmp"
	"context"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"log/slog"

	"github.com/gorilla/securecookie"
	"github.com/redis/go-redis/v9"

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

// DefaultSessionRecheck is FACADE_SESSION_RECHECK's default.
const DefaultSessionRecheck = 15 * time.Minute

// DefaultSessionIdle is FACADE_SESSION_IDLE's default.
const DefaultSessionIdle = time.Hour

// touchEvery is how stale a session's last-used time may get before a
// request writes it again: the idle timeout slides, but a busy page costs
// one write a minute, not one per request.
const touchEvery = time.Minute

// SessionConfig tunes Sessions. Every field documents what its zero value
// means.
type SessionConfig struct {
	// Keys are FACADE_SESSION_KEYS, 32 bytes each (ParseKeys): the first
	// seals, every one opens, so a new key goes first and an old one
	// stays until the sessions it sealed have expired. NewSessions refuses
	// none; NewSessionAdmin ignores them.
	Keys [][]byte
	// Lifetime is a session's longest life (FACADE_SESSION_LIFETIME); zero
	// means DefaultSessionLifetime.
	Lifetime time.Duration
	// Idle ends a session unused this long (FACADE_SESSION_IDLE); zero
	// means DefaultSessionIdle.
	Idle time.Duration
	// Recheck is how often a session with a refresh token asks the
	// provider again (FACADE_SESSION_RECHECK); zero means
	// DefaultSessionRecheck.
	Recheck time.Duration
	// Secure marks cookies Secure with the __Host- prefix; false only for
	// a public URL that is plain http on loopback (SecureCookies).
	Secure bool
	// Now is the clock sessions expire by; nil means time.Now.
	Now func() time.Time
}

// Sessions keeps browser sessions in Redis and seals their ids into the
// session cookie: encrypted (AES-256) and authenticated (HMAC-SHA256) by
// gorilla/securecookie, with keys derived from each FACADE_SESSION_KEYS
// entry. The record (principal, any number of groups, anti-forgery token,
// times, client address) never leaves the server, so a session holds what
// the provider sends and ends for real: deleting the record ends it on
// every instance at once.
type Sessions struct {
	codecs   []securecookie.Codec
	lifetime time.Duration
	idle     time.Duration
	recheck  time.Duration
	secure   bool
	now      func() time.Time
	rdb      redis.UniversalClient
	// refresher asks the provider about a session's person again with its
	// refresh token (SignIn sets it: recheck.go); nil: no re-checks.
	refresher refresher
	logger    *slog.Logger // the re-check's lines (SignIn's log)
}

// sessionCookie is what the session cookie holds: the session's random id
// and nothing else.
type sessionCookie struct {
	ID string `json:"id"`
}

// Record is a session as Redis keeps it (docs/contract.md §2, "Browser
// sign-in").
type Record struct {
	Sub    string   `json:"sub"`
	Role   string   `json:"role,omitempty"`
	Roles  []string `json:"roles,omitempty"` // a list role claim's roles (facade.Principal)
	Groups []string `json:"groups,omitempty"`
	// GroupsIncomplete: the provider's groups did not fit in the ID token
	// (overage), so the session has none of them.
	GroupsIncomplete bool `json:"groups_incomplete,omitempty"`
	// XSRF is this session's anti-forgery token, random per sign-in: an
	// unsafe request on the session must send it back (CheckXSRF).
	XSRF     string    `json:"xsrf"`
	Created  time.Time `json:"created"`
	LastUsed time.Time `json:"last_used"`
	Expires  time.Time `json:"expires"`
	Client   string    `json:"client,omitempty"` // the address it was last used from
	// IDToken is the provider's ID token, the hint its logout takes.
	IDToken string `json:"idt,omitempty"`
	// ProviderSub and ProviderSID are the ID token's sub and sid: a
	// back-channel logout names the person and session by these, while
	// Sub may come from another claim (FACADE_OIDC_USER_CLAIM).
	ProviderSub string `json:"psub,omitempty"`
	ProviderSID string `json:"psid,omitempty"`
	// Refresh is the provider's refresh token, sealed with the session
	// keys (never in the cookie, never in clear in Redis); Checked is
	// when the provider last confirmed the person (recheck.go).
	Refresh string    `json:"rt,omitempty"`
	Checked time.Time `json:"checked,omitzero"`
}

// ProviderSession is what a sign-in keeps of the provider's side: its ID
// token (the logout hint) and the sub and sid a back-channel logout names.
type ProviderSession struct {
	IDToken, Sub, SID string
	// RefreshToken, when the provider granted offline_access, lets the
	// session re-check the person (sealed before it is stored).
	RefreshToken string
}

// principal is who the session speaks for.
func (rec Record) principal() facade.Principal {
	return facade.Principal{ID: rec.Sub, Role: rec.Role, Roles: rec.Roles, Groups: rec.Groups, GroupsIncomplete: rec.GroupsIncomplete}
}

// NewSessions checks cfg and returns Sessions kept in rdb, shared by every
// instance. It accepts a nil rdb (settings checks), but Sessions then
// opens none. It does not contact Redis.
func NewSessions(rdb redis.UniversalClient, cfg SessionConfig) (*Sessions, error) {
	if len(cfg.Keys) == 0 {
		return nil, configError("FACADE_SESSION_KEYS is required with FACADE_OIDC_ISSUER")
	}
	s := newSessions(rdb, cfg)
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

// NewSessionAdmin is Sessions for ops' tools (`facade sessions list|revoke`):
// it reads and ends sessions in Redis and needs no keys, since it never
// opens or seals a cookie. rdb may be nil as for NewSessions.
func NewSessionAdmin(rdb redis.UniversalClient, cfg SessionConfig) *Sessions {
	return newSessions(rdb, cfg)
}

// newSessions is Sessions on rdb with cfg's zero values filled in, without
// the cookie codecs.
func newSessions(rdb redis.UniversalClient, cfg SessionConfig) *Sessions {
	s := &Sessions{lifetime: cfg.Lifetime, idle: cfg.Idle, recheck: cfg.Recheck, secure: cfg.Secure, now: cfg.Now, rdb: rdb}
	if s.recheck <= 0 {
		s.recheck = DefaultSessionRecheck
	}
	if s.lifetime <= 0 {
		s.lifetime = DefaultSessionLifetime
	}
	if s.idle <= 0 {
		s.idle = DefaultSessionIdle
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s
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

// Issue starts a new session for p, from client, that ends at the
// earlier of the configured lifetime and notAfter (the ID token's expiry),
// with a fresh id and anti-forgery token: a session someone planted
// before sign-in is never continued (session fixation). It returns the
// cookies to set.
func (s *Sessions) Issue(ctx context.Context, p facade.Principal, notAfter time.Time, ps ProviderSession, client string) (Record, []*http.Cookie, error) {
	now := s.now()
	exp := now.Add(s.lifetime)
	if !notAfter.IsZero() && notAfter.Before(exp) {
		exp = notAfter
	}
	exp = exp.Truncate(time.Second) // as /auth/me's expires_at says it
	rec := Record{Sub: p.ID, Role: p.Role, Roles: p.Roles, Groups: p.Groups, GroupsIncomplete: p.GroupsIncomplete, XSRF: randomToken(),
		Created: now, LastUsed: now, Expires: exp, Client: client,
		IDToken: ps.IDToken, ProviderSub: ps.Sub, ProviderSID: ps.SID, Checked: now}
	if ps.RefreshToken != "" {
		sealed, err := s.sealRefresh(ps.RefreshToken)
		if err != nil {
			return Record{}, nil, err
		}
		rec.Refresh = sealed
	}
	id := randomToken()
	v, err := securecookie.EncodeMulti(sessionName, sessionCookie{ID: id}, s.codecs...)
	if err != nil {
		return Record{}, nil, err
	}
	if err := s.store(ctx, id, rec); err != nil {
		return Record{}, nil, err
	}
	maxAge := exp.Sub(now) + cookieGrace
	return rec, []*http.Cookie{s.cookie(sessionName, v, maxAge, true), s.xsrfCookie(rec.XSRF, maxAge)}, nil
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

// cleared are the cookies that remove the session and its XSRF-TOKEN.
func (s *Sessions) cleared() []*http.Cookie {
	return []*http.Cookie{s.cookie(sessionName, "", -1, true), s.xsrfCookie("", -1)}
}

// sessionID opens the request's session cookie. ok is false when there is
// none; an error is facade.ErrSessionInvalid (it does not open with any
// configured key).
func (s *Sessions) sessionID(r *http.Request) (id string, ok bool, err error) {
	c, err := r.Cookie(s.SessionCookie())
	if err != nil {
		return "", false, nil
	}
	var sc sessionCookie
	if err := securecookie.DecodeMulti(sessionName, c.Value, &sc, s.codecs...); err != nil || sc.ID == "" {
		return "", true, facade.ErrSessionInvalid
	}
	return sc.ID, true, nil
}

// Open reads the request's session: its cookie, then its record (one Redis
// read; a write at most once a minute, to slide the idle time). ok is false
// when there is no session cookie; an error is facade.ErrSessionInvalid (the
// cookie does not open), facade.ErrSessionExpired (the session has ended: logged
// out, revoked, idle or past its lifetime), or ErrStoreUnavailable (Redis
// could not be asked: not "signed out"). client is the caller's address,
// kept for `facade sessions list`.
func (s *Sessions) Open(ctx context.Context, r *http.Request, client string) (id Identity, ok bool, err error) {
	sid, ok, err := s.sessionID(r)
	if !ok || err != nil {
		return Identity{}, ok, err
	}
	rec, err := s.load(ctx, sid)
	if err != nil {
		return Identity{}, true, err
	}
	now := s.now()
	if !now.Before(rec.Expires) || now.Sub(rec.LastUsed) >= s.idle {
		return Identity{}, true, facade.ErrSessionExpired
	}
	if rec.Refresh != "" && s.refresher != nil && now.Sub(rec.Checked) >= s.recheck {
		var ended bool
		if rec, ended = s.recheckSession(ctx, sid, rec); ended {
			return Identity{}, true, facade.ErrSessionExpired
		}
	}
	if now.Sub(rec.LastUsed) >= touchEvery {
		rec.LastUsed = now
		if client != "" {
			rec.Client = client
		}
		s.touch(ctx, sid, rec)
	}
	p := rec.principal()
	return Identity{Principal: p, ExpiresAt: rec.Expires, Via: ViaSession, xsrf: rec.XSRF}, true, nil
}

// flow is a sign-in in progress, kept in its own short-lived sealed
// cookie bound to the browser that started it and named after its state
// (flowCookie): the callback accepts only a state this browser was sent
// with (login CSRF), several sign-ins may be in progress at once (tabs),
// and the nonce and PKCE verifier never leave the service unsealed.
type flow struct {
	State    string `json:"state"`
	Nonce    string `json:"nonce"`
	Verifier string `json:"verifier"`
	ReturnTo string `json:"return_to"`
	Expires  int64  `json:"exp"`
}

// maxFlows bounds the sign-ins in progress one browser keeps: each is a
// cookie of ~300 bytes sent with every request, and a page that started
// sign-ins in a loop must not push the headers past their limit.
const maxFlows = 5

// flowCookie is the name (before any __Host- prefix) of the sign-in
// cookie for state: the first 128 bits of the state, so a callback finds
// its own flow and no other.
func flowCookie(state string) string {
	if len(state) > 22 {
		state = state[:22]
	}
	return flowName + "-" + state
}

// startFlow seals f into its cookie.
func (s *Sessions) startFlow(f flow) (*http.Cookie, error) {
	f.Expires = s.now().Add(flowLifetime).Unix()
	v, err := securecookie.EncodeMulti(flowName, f, s.codecs...)
	if err != nil {
		return nil, err
	}
	return s.cookie(flowCookie(f.State), v, flowLifetime, true), nil
}

// oldFlows are the cookies that remove the request's oldest sign-ins in
// progress, so that with the one being started at most maxFlows remain.
func (s *Sessions) oldFlows(r *http.Request) []*http.Cookie {
	type held struct {
		name string
		exp  int64
	}
	var flows []held
	prefix := s.cookieName(flowName + "-")
	for _, c := range r.Cookies() {
		if !strings.HasPrefix(c.Name, prefix) {
			continue
		}
		var f flow
		_ = securecookie.DecodeMulti(flowName, c.Value, &f, s.codecs...) // unreadable: oldest
		flows = append(flows, held{c.Name, f.Expires})
	}
	if len(flows) < maxFlows {
		return nil
	}
	slices.SortFunc(flows, func(a, b held) int { return cmp.Compare(a.exp, b.exp) })
	var out []*http.Cookie
	for _, f := range flows[:len(flows)-maxFlows+1] {
		c := s.cookie("", "", -1, true)
		c.Name = f.name
		out = append(out, c)
	}
	return out
}

// Why a callback found no usable sign-in of this browser: each has its
// own words on the page a person sees (SignInFailure).
var (
	errNoFlow      = errors.New("no sign-in in progress in this browser for this state")
	errFlowExpired = errors.New("the sign-in took too long")
)

// takeFlow opens the request's sign-in cookie for state and returns the
// cookie that removes it: a flow is used once, whatever the outcome.
func (s *Sessions) takeFlow(r *http.Request, state string) (flow, []*http.Cookie, error) {
	if state == "" {
		return flow{}, nil, errNoFlow
	}
	name := flowCookie(state)
	c, err := r.Cookie(s.cookieName(name))
	if err != nil {
		return flow{}, nil, errNoFlow
	}
	used := []*http.Cookie{s.cookie(name, "", -1, true)}
	var f flow
	if err := securecookie.DecodeMulti(flowName, c.Value, &f, s.codecs...); err != nil {
		return flow{}, used, errNoFlow
	}
	if !s.now().Before(time.Unix(f.Expires, 0)) {
		return flow{}, used, errFlowExpired
	}
	if !equal(f.State, state) {
		return flow{}, used, errors.New("state does not match this browser's sign-in")
	}
	return f, used, nil
}

// randomToken is 32 random bytes, base64url: state, nonce, XSRF tokens.
func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b)
}

type configError string

func (e configError) Error() string { return string(e) }
