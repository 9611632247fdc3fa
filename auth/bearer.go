package auth

import (
	"context"
	"crypto"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"
	"github.com/redis/go-redis/v9"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/internal/outage"
)

// TokenConfig selects one of the two token modes of docs/contract.md §2. Exactly
// one of Secret (HS256) or JWKSURL (RS256/ES256 with issuer and audience)
// must be set; every other field documents what its zero value means.
type TokenConfig struct {
	Secret []byte // FACADE_JWT_SECRET's (first) key, at least 32 bytes; nil: JWKS mode
	// OtherSecrets are FACADE_JWT_SECRET's other keys: tokens signed with
	// any of them verify too, so keys rotate without a token failing
	// (hskeys.go).
	OtherSecrets [][]byte
	JWKSURL      string // FACADE_JWKS_URL; empty: HS256 mode
	Issuer       string // FACADE_JWT_ISSUER, required with JWKSURL; ignored without
	Audience     string // FACADE_JWT_AUDIENCE, required with JWKSURL; ignored without
	// Claims names the claims the principal is read from (user, role,
	// groups), as for ID tokens; zero fields mean the defaults.
	Claims Claims
	// MaxLifetime refuses tokens valid for longer (exp minus iat, or minus
	// now without iat); zero means DefaultMaxLifetime.
	MaxLifetime time.Duration
	// Now is the clock tokens are checked against; nil means time.Now.
	Now func() time.Time
	// Log receives the warning about a token whose groups did not fit
	// (overage) and the outages of Redis; nil means slog.Default().
	Log *slog.Logger
	// Redis is where revocations are read (revoke.go): a revoked
	// principal's tokens issued before it are refused; nil: none are read.
	Redis redis.UniversalClient
}

// DefaultMaxLifetime is FACADE_JWT_MAX_LIFETIME's default: a stolen token
// must not work for years.
const DefaultMaxLifetime = 24 * time.Hour

// tokenLeeway absorbs clock skew between the token issuer and this service.
const tokenLeeway = 10 * time.Second

// Tokens turns a bearer token into an Identity: HS256 with
// FACADE_JWT_SECRET, or RS256/ES256 from FACADE_JWKS_URL with issuer and
// audience checked.
type Tokens struct {
	cache       *tokenCache
	parser      *jwt.Parser
	keyfunc     func(ctx context.Context) jwt.Keyfunc
	claims      Claims
	maxLifetime time.Duration
	now         func() time.Time
	log         *slog.Logger
	rdb         redis.UniversalClient // revocations; nil: none
	outage      *outage.Log           // of rdb
}

// NewTokens validates cfg and, in JWKS mode, starts the key set's
// background refresh, which stops when ctx ends.
func NewTokens(ctx context.Context, cfg TokenConfig) (*Tokens, error) {
	cfg.Claims = cfg.Claims.withDefaults()
	if cfg.MaxLifetime <= 0 {
		cfg.MaxLifetime = DefaultMaxLifetime
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	if cfg.JWKSURL != "" {
		return newJWKSTokens(ctx, cfg)
	}
	a := newTokens(cfg, jwt.WithValidMethods([]string{"HS256"}))
	a.keyfunc = hmacKeys(cfg.keys())
	return a, nil
}

// Check reports every problem NewTokens would refuse cfg for,
// without contacting the JWKS URL, so a start-up can list them all at once
// (errors.Join; each names its setting).
func (cfg TokenConfig) Check() error {
	// One flat list (config.go reports each entry on its line).
	var errs []error
	for _, err := range []error{cfg.checkMode(), cfg.Claims.Check()} {
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			errs = append(errs, j.Unwrap()...)
		} else if err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// keys are FACADE_JWT_SECRET's keys, the first first.
func (cfg TokenConfig) keys() [][]byte {
	if len(cfg.Secret) == 0 && len(cfg.OtherSecrets) == 0 {
		return nil
	}
	return append([][]byte{cfg.Secret}, cfg.OtherSecrets...)
}

func (cfg TokenConfig) checkMode() error {
	switch {
	case cfg.JWKSURL != "" && len(cfg.keys()) > 0:
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
	case len(cfg.keys()) > 0:
		return checkKeys(cfg.keys())
	}
	return configError("FACADE_JWT_SECRET (or FACADE_JWKS_URL) is required")
}

// newTokens holds the rules both modes share: exp required, iat not
// in the future, the clock leeway, the lifetime limit.
func newTokens(cfg TokenConfig, opts ...jwt.ParserOption) *Tokens {
	opts = append(opts, jwt.WithExpirationRequired(), jwt.WithIssuedAt(),
		jwt.WithLeeway(tokenLeeway), jwt.WithTimeFunc(cfg.Now))
	return &Tokens{
		cache:       newTokenCache(cfg.Now),
		parser:      jwt.NewParser(opts...),
		claims:      cfg.Claims,
		maxLifetime: cfg.MaxLifetime,
		now:         cfg.Now,
		log:         cfg.Log,
		rdb:         cfg.Redis,
		outage:      outage.New(cfg.Log, "token revocation list (Redis)", cfg.Now),
	}
}

func newJWKSTokens(ctx context.Context, cfg TokenConfig) (*Tokens, error) {
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
	a := newTokens(cfg, jwt.WithValidMethods([]string{"RS256", "ES256"}),
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

// Cached returns the identity of a token that verified recently, without
// verifying it again (the HTTP layer asks before deciding whether a
// verification is due under its failed-authentication limit).
func (a *Tokens) Cached(raw string) (Identity, bool) { return a.cache.get(raw) }

// Identity verifies a raw token and returns who it speaks for. A refusal
// is one of the token-* errors of docs/contract.md §2, saying why.
func (a *Tokens) Identity(ctx context.Context, raw string) (Identity, error) {
	if len(raw) > maxTokenLen {
		return Identity{}, facade.ErrTokenMalformed
	}
	if id, ok := a.cache.get(raw); ok {
		return id, nil
	}
	id, err := a.verify(ctx, raw)
	if err != nil {
		return Identity{}, facade.Wrap(tokenRefusal(err), err)
	}
	a.cache.put(raw, id, id.ExpiresAt.Add(tokenLeeway))
	return id, nil
}

func (a *Tokens) verify(ctx context.Context, raw string) (Identity, error) {
	claims := jwt.MapClaims{}
	token, err := a.parser.ParseWithClaims(raw, claims, a.keyfunc(ctx))
	if err != nil {
		return Identity{}, err
	}
	if _, ok := token.Header["crit"]; ok {
		// RFC 7515 4.1.11: an extension marked critical that the recipient
		// does not understand makes the token invalid. This service
		// understands none.
		return Identity{}, errCrit
	}
	if sub, _ := claims["sub"].(string); !usableName(sub) {
		return Identity{}, errBadToken
	}
	exp, err := claims.GetExpirationTime()
	if err != nil || exp == nil {
		return Identity{}, errBadToken
	}
	if err := a.checkLifetime(claims, exp.Time); err != nil {
		return Identity{}, err
	}
	p, err := a.claims.principal(claims)
	if err != nil {
		return Identity{}, errBadToken
	}
	if err := a.checkRevoked(ctx, p.ID, issuedAt(claims)); err != nil {
		return Identity{}, err
	}
	if p.GroupsIncomplete {
		// Once per token (verified tokens are cached): the caller's group
		// grants fail, and ops must learn why.
		warnOverage(ctx, a.log, p.ID)
	}
	return Identity{Principal: p, ExpiresAt: exp.Time, Via: ViaBearer}, nil
}

// issuedAt is the token's iat, nil without one.
func issuedAt(claims jwt.MapClaims) *time.Time {
	if iat, err := claims.GetIssuedAt(); err == nil && iat != nil {
		return &iat.Time
	}
	return nil
}

// checkLifetime refuses a token valid for longer than maxLifetime, counted
// from iat (already known not to be in the future) or, without iat, from
// now.
func (a *Tokens) checkLifetime(claims jwt.MapClaims, exp time.Time) error {
	start := a.now()
	if iat := issuedAt(claims); iat != nil {
		start = *iat
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
	{errRevoked, facade.ErrTokenExpired}, // "get a new token", as for a session revoked
}

// tokenRefusal is the 401 for a token verify refused: anything not in
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

// maxTokenLen bounds a bearer token: a longer one was sent, so it is
// refused as malformed (never as missing), before any parsing. 12 KiB
// holds an access token carrying Microsoft Entra's 200 group ids (about
// 10 KB) and stays inside the 16 KiB all headers may take together.
const maxTokenLen = 12 << 10

// BearerToken reads the token of an Authorization: Bearer header: ok when
// one was sent, whatever its length (Identity refuses one past 12 KiB
// as token-malformed).
func BearerToken(h string) (string, bool) {
	const prefix = "bearer "
	if len(h) <= len(prefix) || !strings.EqualFold(h[:len(prefix)], prefix) {
		return "", false
	}
	tok := strings.TrimSpace(h[len(prefix):])
	return tok, tok != ""
}
