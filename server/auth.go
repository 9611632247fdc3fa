package server

import (
	"context"
	"crypto"
	"errors"
	"strings"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"
	"github.com/labstack/echo/v4"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/auth"
)

// AuthConfig selects one of the two token modes of docs/contract.md §2. Exactly
// one of Secret (HS256) or JWKSURL (RS256/ES256 with issuer and audience)
// must be set.
type AuthConfig struct {
	Secret    []byte
	JWKSURL   string
	Issuer    string
	Audience  string
	RoleClaim string // default "role"
	// MaxLifetime refuses tokens valid for longer (exp minus iat, or minus
	// now without iat); zero means DefaultMaxLifetime.
	MaxLifetime time.Duration
	// Now is the clock tokens are checked against; nil means time.Now.
	Now func() time.Time
}

// DefaultMaxLifetime is FACADE_JWT_MAX_LIFETIME's default: a stolen token
// must not work for years.
const DefaultMaxLifetime = 24 * time.Hour

// tokenLeeway absorbs clock skew between the token issuer and this service.
const tokenLeeway = 10 * time.Second

// Authenticator turns a bearer token into a Principal.
type Authenticator struct {
	cache       *tokenCache
	parser      *jwt.Parser
	keyfunc     func(ctx context.Context) jwt.Keyfunc
	roleClaim   string
	maxLifetime time.Duration
	now         func() time.Time
}

// NewAuthenticator validates cfg and, in JWKS mode, starts the key set's
// background refresh, which stops when ctx ends.
func NewAuthenticator(ctx context.Context, cfg AuthConfig) (*Authenticator, error) {
	if cfg.RoleClaim == "" {
		cfg.RoleClaim = "role"
	}
	if cfg.MaxLifetime <= 0 {
		cfg.MaxLifetime = DefaultMaxLifetime
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	if cfg.JWKSURL != "" {
		return newJWKSAuthenticator(ctx, cfg)
	}
	secret := cfg.Secret
	a := newAuthenticator(cfg, jwt.WithValidMethods([]string{"HS256"}))
	a.keyfunc = func(context.Context) jwt.Keyfunc { return func(*jwt.Token) (any, error) { return secret, nil } }
	return a, nil
}

// Check reports every problem NewAuthenticator would refuse cfg for,
// without contacting the JWKS URL, so a start-up can list them all at once
// (errors.Join; each names its setting).
func (cfg AuthConfig) Check() error {
	switch {
	case cfg.JWKSURL != "" && len(cfg.Secret) > 0:
		return configError("set only one of FACADE_JWT_SECRET and FACADE_JWKS_URL")
	case cfg.JWKSURL != "":
		var errs []error
		if cfg.Issuer == "" {
			errs = append(errs, configError("FACADE_JWT_ISSUER is required with FACADE_JWKS_URL"))
		}
		if cfg.Audience == "" {
			errs = append(errs, configError("FACADE_JWT_AUDIENCE is required with FACADE_JWKS_URL"))
		}
		return errors.Join(errs...)
	case len(cfg.Secret) >= 32:
		return nil
	case len(cfg.Secret) > 0:
		return configError("FACADE_JWT_SECRET must be at least 32 bytes")
	}
	return configError("FACADE_JWT_SECRET (or FACADE_JWKS_URL) is required")
}

// newAuthenticator holds the rules both modes share: exp required, iat not
// in the future, the clock leeway, the lifetime limit.
func newAuthenticator(cfg AuthConfig, opts ...jwt.ParserOption) *Authenticator {
	opts = append(opts, jwt.WithExpirationRequired(), jwt.WithIssuedAt(),
		jwt.WithLeeway(tokenLeeway), jwt.WithTimeFunc(cfg.Now))
	return &Authenticator{
		cache:       newTokenCache(cfg.Now),
		parser:      jwt.NewParser(opts...),
		roleClaim:   cfg.RoleClaim,
		maxLifetime: cfg.MaxLifetime,
		now:         cfg.Now,
	}
}

func newJWKSAuthenticator(ctx context.Context, cfg AuthConfig) (*Authenticator, error) {
	// A token with an unknown kid may trigger one refresh per 5 minutes; never
	// let a request wait on that rate limit (the default waits a minute).
	kf, err := keyfunc.NewDefaultOverrideCtx(ctx, []string{cfg.JWKSURL}, keyfunc.Override{
		RateLimitWaitMax: time.Millisecond,
		RefreshInterval:  15 * time.Minute,
		HTTPTimeout:      5 * time.Second,
	})
	if err != nil {
		return nil, configError("FACADE_JWKS_URL is not a usable JWKS URL")
	}
	a := newAuthenticator(cfg, jwt.WithValidMethods([]string{"RS256", "ES256"}),
		jwt.WithIssuer(cfg.Issuer), jwt.WithAudience(cfg.Audience))
	a.keyfunc = signingKeys(kf.Storage())
	return a, nil
}

// signingKeys finds the keys of the set that may verify token: the one its
// kid names (or, without a kid, every one), and only those meant for
// signatures ("use" absent or "sig") whose "alg", when given, is the
// token's. keyfunc's own lookup checks neither "use" by default nor
// anything at all for a token without a kid.
func signingKeys(store jwkset.Storage) func(ctx context.Context) jwt.Keyfunc {
	return func(ctx context.Context) jwt.Keyfunc {
		return func(token *jwt.Token) (any, error) {
			var candidates []jwkset.JWK
			if raw, ok := token.Header["kid"]; ok {
				kid, ok := raw.(string)
				if !ok {
					return nil, errBadToken
				}
				jwk, err := store.KeyRead(ctx, kid)
				if err != nil {
					return nil, err
				}
				candidates = append(candidates, jwk)
			} else {
				all, err := store.KeyReadAll(ctx)
				if err != nil {
					return nil, err
				}
				candidates = all
			}
			var set jwt.VerificationKeySet
			for _, jwk := range candidates {
				m := jwk.Marshal()
				if (m.USE != "" && m.USE != jwkset.UseSig) || (m.ALG != "" && m.ALG.String() != token.Method.Alg()) {
					continue
				}
				key := jwk.Key()
				if pk, ok := key.(interface{ Public() crypto.PublicKey }); ok {
					key = pk.Public()
				}
				set.Keys = append(set.Keys, key)
			}
			if len(set.Keys) == 0 {
				return nil, errNoSigningKey
			}
			return set, nil
		}
	}
}

var (
	errBadToken     = errors.New("bad token")
	errNoSigningKey = errors.New("no signing key for the token")
	errCrit         = errors.New("token names critical extensions")
	errLifetime     = errors.New("token lifetime exceeds FACADE_JWT_MAX_LIFETIME")
)

// Principal verifies a raw token and returns who it speaks for.
func (a *Authenticator) Principal(ctx context.Context, raw string) (facade.Principal, error) {
	if p, ok := a.cache.get(raw); ok {
		return p, nil
	}
	claims := jwt.MapClaims{}
	token, err := a.parser.ParseWithClaims(raw, claims, a.keyfunc(ctx))
	if err != nil {
		return facade.Principal{}, err
	}
	if _, ok := token.Header["crit"]; ok {
		// RFC 7515 4.1.11: an extension marked critical that the recipient
		// does not understand makes the token invalid. This service
		// understands none.
		return facade.Principal{}, errCrit
	}
	sub, _ := claims["sub"].(string)
	if sub == "" || len(sub) > 256 || hasControl(sub) {
		// Control characters in a principal id could forge log lines or
		// collide with composite keys built from it.
		return facade.Principal{}, errBadToken
	}
	exp, err := claims.GetExpirationTime()
	if err != nil || exp == nil {
		return facade.Principal{}, errBadToken
	}
	if err := a.checkLifetime(claims, exp.Time); err != nil {
		return facade.Principal{}, err
	}
	// A role claim that is absent or not a string means "no role", not an
	// error (docs/contract.md §3).
	role, _ := claims[a.roleClaim].(string)
	p := facade.Principal{ID: sub, Role: role}
	a.cache.put(raw, p, exp.Add(tokenLeeway))
	return p, nil
}

// checkLifetime refuses a token valid for longer than maxLifetime, counted
// from iat (already known not to be in the future) or, without iat, from
// now.
func (a *Authenticator) checkLifetime(claims jwt.MapClaims, exp time.Time) error {
	start := a.now()
	if iat, err := claims.GetIssuedAt(); err == nil && iat != nil {
		start = iat.Time
	}
	if exp.Sub(start) > a.maxLifetime {
		return errLifetime
	}
	return nil
}

// tokenRefusals says why a token was refused, keyed by what the parser
// reported (golang-jwt's sentinel errors, and this file's own checks), so
// the 401's code and sentence come from the one table in server/problem,
// never from a library's text. The first match wins: a token signed by
// another key is "bad signature" whatever its claims say, and a token
// from another issuer is "wrong issuer" before it is "expired".
var tokenRefusals = []struct {
	cause error
	code  *facade.Error
}{
	{jwt.ErrTokenMalformed, facade.ErrTokenMalformed},
	{jwt.ErrTokenSignatureInvalid, facade.ErrTokenBadSignature}, // includes an algorithm not accepted
	{jwt.ErrTokenUnverifiable, facade.ErrTokenBadSignature},     // no key of ours for it
	{jwt.ErrTokenInvalidIssuer, facade.ErrTokenWrongIssuer},
	{jwt.ErrTokenInvalidAudience, facade.ErrTokenWrongAudience},
	{jwt.ErrTokenNotValidYet, facade.ErrTokenNotYetValid},
	{jwt.ErrTokenUsedBeforeIssued, facade.ErrTokenNotYetValid},
	{jwt.ErrTokenExpired, facade.ErrTokenExpired},
	{errLifetime, facade.ErrTokenLifetimeTooLong},
}

// tokenRefusal is the 401 for a token Principal refused: anything not in
// tokenRefusals (a missing claim, a claim of the wrong type, a critical
// header, a bad sub) is a malformed token.
func tokenRefusal(err error) *facade.Error {
	for _, r := range tokenRefusals {
		if errors.Is(err, r.cause) {
			return r.code
		}
	}
	return facade.ErrTokenMalformed
}

// authenticate requires a valid bearer token and stores the principal in
// the request context. A refusal says why in its code (tokenRefusal).
func (s *Server) authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if isPublicPath(c.Request().URL.Path) || isPublicRoute(c.Path()) || (s.signin != nil && isSignInRoute(c.Path())) {
			return next(c)
		}
		raw, ok := bearerToken(c.Request().Header.Get("Authorization"))
		if !ok {
			// No bearer token: the session cookie, if this request may
			// use it. A bearer token, when sent, always decides.
			id, ok, err := s.session(c.Request())
			switch {
			case err != nil:
				return err
			case !ok:
				return facade.ErrTokenMissing
			}
			c.SetRequest(c.Request().WithContext(auth.WithIdentity(c.Request().Context(), id)))
			return next(c)
		}
		p, ok := s.auth.cache.get(raw)
		if !ok {
			if retry, throttled := s.authThrottled(c); throttled {
				return errAuthThrottled(retry)
			}
			var err error
			if p, err = s.auth.Principal(c.Request().Context(), raw); err != nil {
				s.countAuthFailure(c)
				refusal := tokenRefusal(err)
				s.log.Info("authentication failed", "request_id", requestID(c),
					"code", string(refusal.Code), "reason", err.Error())
				return refusal
			}
		}
		r := c.Request()
		c.SetRequest(r.WithContext(auth.WithIdentity(r.Context(), auth.Identity{Principal: p, Via: auth.ViaBearer})))
		return next(c)
	}
}

func bearerToken(h string) (string, bool) {
	const prefix = "bearer "
	if len(h) <= len(prefix) || !strings.EqualFold(h[:len(prefix)], prefix) {
		return "", false
	}
	tok := strings.TrimSpace(h[len(prefix):])
	return tok, tok != "" && len(tok) <= 8192
}

// Mint signs an HS256 token for `facade token` and tests.
func Mint(secret []byte, sub, role, roleClaim string, ttl time.Duration) (string, error) {
	if roleClaim == "" {
		roleClaim = "role"
	}
	now := time.Now()
	claims := jwt.MapClaims{"sub": sub, "iat": now.Unix(), "exp": now.Add(ttl).Unix()}
	if role != "" {
		claims[roleClaim] = role
	}
	return jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(secret)
}

// isPublicPath lists what needs no token: the ops endpoints (served on the
// API address only when FACADE_OPS_ADDR is not set apart).
func isPublicPath(p string) bool {
	return p == "/healthz" || p == "/readyz" || p == "/metrics"
}

// isPublicRoute reports whether the matched route needs no token: the
// browser page's own files, the API description and the problem pages
// (what an error's type points at). It asks the router's
// match, not the raw path, so no spelling of a path can reach an API route
// without a token.
func isPublicRoute(route string) bool {
	return route == "/ui" || route == "/ui/*" || route == "/openapi.json" ||
		route == "/problems/" || route == "/problems/:code"
}

func hasControl(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return true
		}
	}
	return false
}
