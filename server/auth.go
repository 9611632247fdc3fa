package server

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"
	"github.com/labstack/echo/v4"

	"github.com/facade-dev/facade"
)

// AuthConfig selects one of the two token modes of SPEC section 2. Exactly
// one of Secret (HS256) or JWKSURL (RS256/ES256 with issuer and audience)
// must be set.
type AuthConfig struct {
	Secret    []byte
	JWKSURL   string
	Issuer    string
	Audience  string
	RoleClaim string // default "role"
}

// tokenLeeway absorbs clock skew between the token issuer and this service.
const tokenLeeway = 10 * time.Second

// Authenticator turns a bearer token into a Principal.
type Authenticator struct {
	cache     *tokenCache
	parser    *jwt.Parser
	keyfunc   func(ctx context.Context) jwt.Keyfunc
	roleClaim string
}

// NewAuthenticator validates cfg and, in JWKS mode, starts the key set's
// background refresh, which stops when ctx ends.
func NewAuthenticator(ctx context.Context, cfg AuthConfig) (*Authenticator, error) {
	role := cfg.RoleClaim
	if role == "" {
		role = "role"
	}
	switch {
	case cfg.JWKSURL != "" && len(cfg.Secret) > 0:
		return nil, configError("set only one of FACADE_JWT_SECRET and FACADE_JWKS_URL")
	case cfg.JWKSURL != "":
		return newJWKSAuthenticator(ctx, cfg, role)
	case len(cfg.Secret) >= 32:
		secret := cfg.Secret
		return &Authenticator{
			cache: newTokenCache(),
			parser: jwt.NewParser(jwt.WithValidMethods([]string{"HS256"}),
				jwt.WithExpirationRequired(), jwt.WithLeeway(tokenLeeway)),
			keyfunc:   func(context.Context) jwt.Keyfunc { return func(*jwt.Token) (any, error) { return secret, nil } },
			roleClaim: role,
		}, nil
	case len(cfg.Secret) > 0:
		return nil, configError("FACADE_JWT_SECRET must be at least 32 bytes")
	}
	return nil, configError("FACADE_JWT_SECRET (or FACADE_JWKS_URL) is required")
}

func newJWKSAuthenticator(ctx context.Context, cfg AuthConfig, role string) (*Authenticator, error) {
	if cfg.Issuer == "" {
		return nil, configError("FACADE_JWT_ISSUER is required with FACADE_JWKS_URL")
	}
	if cfg.Audience == "" {
		return nil, configError("FACADE_JWT_AUDIENCE is required with FACADE_JWKS_URL")
	}
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
	return &Authenticator{
		cache: newTokenCache(),
		parser: jwt.NewParser(jwt.WithValidMethods([]string{"RS256", "ES256"}),
			jwt.WithExpirationRequired(), jwt.WithLeeway(tokenLeeway),
			jwt.WithIssuer(cfg.Issuer), jwt.WithAudience(cfg.Audience)),
		keyfunc:   kf.KeyfuncCtx,
		roleClaim: role,
	}, nil
}

var errBadToken = errors.New("bad token")

// Principal verifies a raw token and returns who it speaks for.
func (a *Authenticator) Principal(ctx context.Context, raw string) (facade.Principal, error) {
	if p, ok := a.cache.get(raw); ok {
		return p, nil
	}
	claims := jwt.MapClaims{}
	if _, err := a.parser.ParseWithClaims(raw, claims, a.keyfunc(ctx)); err != nil {
		return facade.Principal{}, err
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
	// A role claim that is absent or not a string means "no role", not an
	// error (SPEC section 3).
	role, _ := claims[a.roleClaim].(string)
	p := facade.Principal{ID: sub, Role: role}
	a.cache.put(raw, p, exp.Add(tokenLeeway))
	return p, nil
}

// authenticate requires a valid bearer token and stores the principal in
// the request context. Every failure gets the same 401.
func (s *Server) authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if isPublicPath(c.Request().URL.Path) {
			return next(c)
		}
		raw, ok := bearerToken(c.Request().Header.Get("Authorization"))
		if !ok {
			return refuse(c, http.StatusUnauthorized, facade.DetailUnauthorized)
		}
		p, err := s.auth.Principal(c.Request().Context(), raw)
		if err != nil {
			s.log.Info("authentication failed", "request_id", requestID(c), "reason", err.Error())
			return refuse(c, http.StatusUnauthorized, facade.DetailUnauthorized)
		}
		r := c.Request()
		c.SetRequest(r.WithContext(facade.WithPrincipal(r.Context(), p)))
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

func hasControl(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return true
		}
	}
	return false
}
