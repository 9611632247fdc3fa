package auth

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"net/http"
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
		used := func(r *Record) bool {
			if now.Sub(r.LastUsed) < touchEvery {
				return false // slid by another request meanwhile
			}
			r.LastUsed = now
			if client != "" {
				r.Client = client
			}
			return true
		}
		s.update(ctx, sid, used)
	}
	p := rec.principal()
	return Identity{Principal: p, ExpiresAt: rec.Expires, Via: ViaSession, xsrf: rec.XSRF}, true, nil
}

// randomToken is 32 random bytes, base64url: state, nonce, XSRF tokens.
func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b)
}

type configError string

func (e configError) Error() string { return string(e) }
