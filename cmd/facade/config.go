package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/facade-dev/facade/auth"
	"github.com/facade-dev/facade/cache"
	"github.com/facade-dev/facade/proxy"
	"github.com/facade-dev/facade/redisdb"
	"github.com/facade-dev/facade/server"
	"github.com/facade-dev/facade/upstream"
)

// settings are the environment variables of docs/contract.md §1, read by
// loadSettings from the table in settingTable.
type settings struct {
	Addr, OpsAddr, PublicURL          string
	RedisURL, RedisAddrs, RedisMaster string
	UpstreamURL, UpstreamToken        string
	UpstreamTimeout                   time.Duration
	CacheTTL, CacheStale              time.Duration
	CacheFinished, LiveInterval       time.Duration
	JWTSecret, JWKSURL                string
	JWTIssuer, JWTAudience            string
	JWTMaxLifetime                    time.Duration
	DrainDelay                        time.Duration
	RoleClaim                         string
	GroupsClaim                       string
	// Browser sign-in (docs/contract.md §2): the provider, this service's
	// client at it, and the sealed sessions.
	OIDCIssuer, OIDCClientID        string
	OIDCClientSecret, OIDCUserClaim string
	OIDCScopes                      []string
	SessionKeys                     [][]byte
	SessionLifetime                 time.Duration
	SessionIdle                     time.Duration
	SessionRecheck                  time.Duration
	Model, Policy                   string
	PolicyAllowShrink               bool          // FACADE_POLICY_ALLOW_SHRINK=1: accept an empty or halved policy on reload and at start
	PolicyUsageFlush                time.Duration // how often usage counts go to Redis; 0: not recorded
	ReadOrigins, WriteOrigins       []string
	RateLimit                       int
	AuthFailureLimit                int
	TrustedProxies                  []*net.IPNet
	MaxTransfer                     int64
	LogLevel                        string
	// OTLPTracesURL is where spans go (OTLP/HTTP): OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
	// as given, or OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces; empty: no tracing.
	OTLPTracesURL string
	// fromFiles are the secret settings read from <NAME>_FILE: a problem
	// with one names the variable the operator set.
	fromFiles map[string]bool
}

//go:generate go test -count=1 -run TestSettingsReferenceIsTheTable . -write-settings-doc

// setting is one environment variable: the one entry that says its name,
// its default, how it is read and what it means. loadSettings reads the
// table, secrets.go takes the secret ones from files, and docs/settings.md
// is written from it (go generate ./cmd/facade; a test fails when the two
// disagree). Adding a setting is adding an entry here.
type setting struct {
	name string
	// def is the value read when the variable is unset or blank; a part's
	// own default (auth.DefaultMaxLifetime, cache.DefaultTTL, ...) is
	// given by that constant, so it is written in one place.
	def string
	// shown is the default as the reference shows it when def does not
	// say it ("required", "same as API"); empty: def, or "none".
	shown string
	// secret: the value may instead be in the file <NAME>_FILE names.
	secret bool
	// raw: the value is read as given, spaces kept (a secret's bytes are
	// its own).
	raw bool
	// doc is its line in the reference: what it does, in the operator's
	// words.
	doc string
	// parse reads the value (def when unset) into the settings, or says
	// what is wrong with it, naming the variable.
	parse func(name, v string) error
}

// settingTable is every setting, in the reference's order, each parsed
// into s (a table built for its names and words alone may be given a
// settings of its own).
func settingTable(s *settings) []setting {
	return []setting{
		{name: "FACADE_ADDR", def: ":8080", parse: asText(&s.Addr),
			doc: "listen address of the API"},
		{name: "FACADE_OPS_ADDR", shown: "same as API", parse: asTextOr(&s.OpsAddr, &s.Addr),
			doc: "where `/healthz`, `/readyz`, `/metrics` are served (public when on the API address)"},
		{name: "FACADE_PUBLIC_URL", shown: "derived from request", parse: asBaseURL(&s.PublicURL),
			doc: "external base URL, used when rewriting links; required with browser sign-in (the redirect URI is built from it, and session cookies are `Secure` with the `__Host-` prefix unless it is plain http on loopback)"},
		{name: "FACADE_REDIS_URL", shown: "required", secret: true, parse: asText(&s.RedisURL),
			doc: "`redis://` or `rediss://` (its password makes it a secret); or `FACADE_REDIS_ADDRS` instead"},
		{name: "FACADE_REDIS_ADDRS", parse: asText(&s.RedisAddrs),
			doc: "instead of `FACADE_REDIS_URL`: a comma list of addresses, a Redis Cluster's, or its sentinels' with `FACADE_REDIS_MASTER`"},
		{name: "FACADE_REDIS_MASTER", parse: asText(&s.RedisMaster),
			doc: "with `FACADE_REDIS_ADDRS`: the master's name at the sentinels"},
		{name: "FACADE_UPSTREAM_URL", parse: asText(&s.UpstreamURL),
			doc: "Bamboo base URL (without it the build endpoints answer 503)"},
		{name: "FACADE_UPSTREAM_TOKEN", secret: true, parse: asText(&s.UpstreamToken),
			doc: "Bamboo personal access token, sent upstream as `Authorization: Bearer`; the caller's token is never forwarded"},
		{name: "FACADE_UPSTREAM_TIMEOUT", def: durationText(upstream.DefaultTimeout), parse: asDuration(&s.UpstreamTimeout, positive),
			doc: "whole-request timeout upstream, retries included"},
		{name: "FACADE_CACHE_TTL", def: durationText(cache.DefaultTTL), parse: asDuration(&s.CacheTTL, positive),
			doc: "fresh lifetime of upstream documents other than results (projects, plans, branches, lists of finished results)"},
		{name: "FACADE_CACHE_STALE", def: durationText(cache.DefaultStale), parse: asDuration(&s.CacheStale, zeroAllowed),
			doc: "how long past its lifetime a document may be served when upstream fails; `0` never serves one"},
		{name: "FACADE_CACHE_FINISHED", def: durationText(proxy.DefaultFinishedTTL), parse: asDuration(&s.CacheFinished, positive),
			doc: "how long a finished build result (plan or job result, by number) is kept: it is not asked upstream again while cached ([build-routes.md](build-routes.md), \"Builds at a real organization's size and pace\")"},
		{name: "FACADE_LIVE_INTERVAL", def: durationText(proxy.DefaultLiveInterval), parse: asDuration(&s.LiveInterval, positive),
			doc: "how often a queued or running result, and a list holding one, is asked upstream while someone reads it: one call per interval however many read it, on however many instances"},
		{name: "FACADE_JWT_SECRET", secret: true, raw: true, parse: asText(&s.JWTSecret),
			doc: "HS256 key of at least 32 bytes (`openssl rand -base64 48`), or several, comma-separated: the first signs (`facade token`), all verify, so keys rotate without a token failing ([operations.md](operations.md), \"Rotating the JWT keys\"). A placeholder or a weak key is refused at start-up"},
		{name: "FACADE_JWKS_URL", parse: asText(&s.JWKSURL),
			doc: "OIDC mode: RS256/ES256 tokens verified against the JWKS, with `FACADE_JWT_ISSUER` and `FACADE_JWT_AUDIENCE` required and checked. Exclusive with the secret."},
		{name: "FACADE_JWT_ISSUER", parse: asText(&s.JWTIssuer),
			doc: "OIDC mode: the issuer (`iss`) a token must name"},
		{name: "FACADE_JWT_AUDIENCE", parse: asText(&s.JWTAudience),
			doc: "OIDC mode: the audience (`aud`) a token must name"},
		{name: "FACADE_JWT_MAX_LIFETIME", def: durationText(auth.DefaultMaxLifetime), parse: asDuration(&s.JWTMaxLifetime, positive),
			doc: "longest validity a token may have (`exp` minus `iat`, or minus now without `iat`); longer-lived tokens are refused"},
		{name: "FACADE_ROLE_CLAIM", def: auth.DefaultClaims.Role, parse: asText(&s.RoleClaim),
			doc: "claim that carries the role (bearer tokens and ID tokens): a path into nested claims (`realm_access.roles`, `resource_access.facade.roles`; a name with a dot in brackets: `[\"https://example.com/roles\"]`); a string is the role, a list gives each of its roles the grade rules know (`student`, `professor`) ([signin.md](signin.md), \"Roles and groups where providers put them\")"},
		{name: "FACADE_GROUPS_CLAIM", def: auth.DefaultClaims.Groups, parse: asText(&s.GroupsClaim),
			doc: "claim that carries the principal's groups (a list of strings, or one string), a path as for the role; each makes the principal a member of `group:<name>` in the policy"},
		{name: "FACADE_OIDC_ISSUER", parse: asText(&s.OIDCIssuer),
			doc: "browser sign-in ([signin.md](signin.md)): the provider's issuer URL, read by discovery at start-up (a wrong one stops start-up)"},
		{name: "FACADE_OIDC_CLIENT_ID", parse: asText(&s.OIDCClientID),
			doc: "this service's client id at the provider (required with the issuer)"},
		{name: "FACADE_OIDC_CLIENT_SECRET", secret: true, raw: true, parse: asText(&s.OIDCClientSecret),
			doc: "this service's client secret at the provider (optional: PKCE S256 is always used)"},
		{name: "FACADE_OIDC_SCOPES", def: strings.Join(auth.DefaultScopes, " "), parse: asFields(&s.OIDCScopes),
			doc: "scopes asked for (`openid` is always added)"},
		{name: "FACADE_OIDC_USER_CLAIM", def: auth.DefaultClaims.User, parse: asText(&s.OIDCUserClaim),
			doc: "claim that becomes the principal id, in ID tokens and bearer tokens alike (e.g. `preferred_username`, `email`, Entra's `oid`)"},
		{name: "FACADE_SESSION_KEYS", shown: "none (required with the issuer)", secret: true, parse: asSessionKeys(&s.SessionKeys),
			doc: "comma list of base64 keys of 32 bytes (`openssl rand -base64 32`): the first seals session cookies, all open them. Rotate by putting a new key first and dropping the old one after `FACADE_SESSION_LIFETIME`"},
		{name: "FACADE_SESSION_LIFETIME", def: durationText(auth.DefaultSessionLifetime), parse: asDuration(&s.SessionLifetime, positive),
			doc: "a browser session's longest life; it also never outlives the ID token it was opened with (sign in again, silently while the provider's own session lasts)"},
		{name: "FACADE_SESSION_IDLE", def: durationText(auth.DefaultSessionIdle), parse: asDuration(&s.SessionIdle, positive),
			doc: "a browser session unused this long ends (sliding: its last use is written at most once a minute)"},
		{name: "FACADE_SESSION_RECHECK", def: durationText(auth.DefaultSessionRecheck), parse: asDuration(&s.SessionRecheck, positive),
			doc: "how often a session holding a refresh token (scope `offline_access` in `FACADE_OIDC_SCOPES`) asks the provider about its person again, at the first request after it ([signin.md](signin.md), \"Re-checking with the provider\")"},
		{name: "FACADE_MODEL", def: "model.conf", parse: asText(&s.Model),
			doc: "casbin model file; reloaded on change (a broken file is refused, the last good policy stays) and on every instance via Redis Pub/Sub"},
		{name: "FACADE_POLICY", def: "policy.csv", parse: asText(&s.Policy),
			doc: "casbin policy file, reloaded as the model is"},
		{name: "FACADE_POLICY_ALLOW_SHRINK", def: "0", raw: true, parse: asZeroOrOne(&s.PolicyAllowShrink),
			doc: "`1` accepts a reload, or a start, that empties the policy or removes more than half of its lines (of the policy in force, or at start of the last policy this Redis saw; refused otherwise: the last good policy stays, the start stops)"},
		{name: "FACADE_POLICY_USAGE_FLUSH", def: "5s", parse: asDuration(&s.PolicyUsageFlush, zeroAllowed),
			doc: "how often each instance adds the policy lines' use to Redis ([policy.md](policy.md), \"Which lines are used\"); a crash loses at most this much; `0` records no usage"},
		{name: "FACADE_CORS_READ_ORIGINS", def: "*", parse: asList(&s.ReadOrigins),
			doc: "origins allowed to GET/HEAD"},
		{name: "FACADE_CORS_WRITE_ORIGINS", shown: "empty", parse: asList(&s.WriteOrigins),
			doc: "origins allowed to POST/PUT (`*` refused at start-up)"},
		{name: "FACADE_RATE_LIMIT", def: "50", parse: asCount(&s.RateLimit, "requests per second"),
			doc: "requests per second per principal (burst twice that), shared through Redis"},
		{name: "FACADE_AUTH_FAILURE_LIMIT", def: "20", parse: asCount(&s.AuthFailureLimit, "failures per minute"),
			doc: "failed authentications per minute per client address (as a burst), shared through Redis; past it a token that fails is 429 with `Retry-After` (a valid token always passes); `0` turns it off"},
		{name: "FACADE_TRUSTED_PROXIES", shown: "empty", parse: asNetworks(&s.TrustedProxies),
			doc: "comma list of addresses or CIDR ranges whose `X-Forwarded-For` names the client; from anyone else the header is ignored. Name your ingress or load balancer alone, as narrowly as you can ([operations.md](operations.md), \"Client addresses behind the ingress\"): every address in it may say who the client is"},
		{name: "FACADE_MAX_TRANSFER", def: "1000000", parse: asMajorUnits(&s.MaxTransfer),
			doc: "largest single transfer, in major units"},
		{name: "FACADE_DRAIN_DELAY", def: "5s", parse: asDuration(&s.DrainDelay, zeroAllowed),
			doc: "on SIGTERM, how long `/readyz` answers 503 while requests are still accepted, before the listeners close (`0` in `demo`)"},
		{name: "FACADE_LOG_LEVEL", def: "info", parse: asLogLevel(&s.LogLevel),
			doc: "`debug`, `info`, `warn`, `error`"},
		{name: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", parse: asText(&s.OTLPTracesURL),
			doc: "where traces go over OTLP/HTTP, used as given; wins over `OTEL_EXPORTER_OTLP_ENDPOINT`"},
		{name: "OTEL_EXPORTER_OTLP_ENDPOINT", parse: asTracesBase(&s.OTLPTracesURL),
			doc: "OpenTelemetry collector to send traces to over OTLP/HTTP (`http://otel-collector:4318`: its `/v1/traces`). Neither set: no tracing at all ([operations.md](operations.md), \"Tracing\"). The exporter and SDK read the other standard variables themselves: `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_EXPORTER_OTLP_TIMEOUT`, `OTEL_SERVICE_NAME` (default `facade`), `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_TRACES_SAMPLER`"},
	}
}

// loadSettings reads the environment through the table. Every malformed
// value is reported at once (settingsErrors, a line each naming its
// variable), so a person fixing a deployment fixes them all in one round.
func loadSettings(getenv func(string) string) (settings, error) {
	var s settings
	s.fromFiles = map[string]bool{}
	for _, name := range secretSettings {
		s.fromFiles[name] = getenv(name+"_FILE") != ""
	}
	getenv, fileErrs := readSecretFiles(getenv)
	bad := settingsErrors(fileErrs)
	for _, st := range settingTable(&s) {
		if err := st.parse(s.source(st.name), st.value(getenv)); err != nil {
			bad = append(bad, err)
		}
	}
	if len(bad) > 0 {
		return s, bad
	}
	return s, nil
}

// source names the variable a setting was given in: NAME, or NAME_FILE
// for a secret read from its file.
func (s settings) source(name string) string {
	if s.fromFiles[name] {
		return name + "_FILE"
	}
	return name
}

// value is the setting's value in the environment, or its default when
// unset or blank.
func (st setting) value(getenv func(string) string) string {
	v := getenv(st.name)
	if !st.raw {
		v = strings.TrimSpace(v)
	}
	if v == "" {
		return st.def
	}
	return v
}

// checkService adds to the malformed values of err (from loadSettings)
// every setting serve needs and lacks, and returns them all, or nil. It
// asks the parts themselves (redisdb, the authenticator, CORS) so that a
// rule lives in one place, and contacts nothing.
func (s settings) checkService(err error) error {
	var bad settingsErrors
	if !errors.As(err, &bad) && err != nil {
		return err
	}
	add := func(err error) {
		if joined, ok := err.(interface{ Unwrap() []error }); ok {
			bad = append(bad, joined.Unwrap()...)
		} else if err != nil {
			bad = append(bad, err)
		}
	}
	if rdb, err := redisdb.Open(s.redisConfig()); err != nil {
		add(err)
	} else {
		_ = rdb.Close()
	}
	secrets := s.checkSecrets()
	bad = append(bad, secrets...)
	add(withoutRepeats(s.authConfig(nil).Check(), secrets))
	if s.OIDCIssuer != "" {
		add(s.signInConfig(nil, nil).Check())
		_, err := auth.NewSessions(nil, s.sessionConfig(nil))
		add(err)
	}
	_, err = server.NewOrigins(s.ReadOrigins, s.WriteOrigins)
	add(err)
	for name, path := range map[string]string{"FACADE_MODEL": s.Model, "FACADE_POLICY": s.Policy} {
		if _, err := os.Stat(path); err != nil {
			add(fmt.Errorf("%s: cannot read %s", name, path))
		}
	}
	if len(bad) == 0 {
		return nil
	}
	sort.SliceStable(bad, func(i, j int) bool { return bad[i].Error() < bad[j].Error() })
	return bad
}

// withoutRepeats drops the lines of err about a variable that one of
// named already has a line about (a placeholder JWT key is also too short:
// one line says it).
func withoutRepeats(err error, named []error) error {
	if err == nil {
		return nil
	}
	errs := []error{err}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		errs = slices.Clone(joined.Unwrap())
	}
	return errors.Join(slices.DeleteFunc(errs, func(e error) bool {
		name, _, _ := strings.Cut(e.Error(), " ")
		return slices.ContainsFunc(named, func(n error) bool {
			return strings.HasPrefix(n.Error(), name+" ") || strings.HasPrefix(n.Error(), name+"_FILE ")
		})
	})...)
}

// authConfig is the token check the settings describe, on clock now.
func (s settings) authConfig(now func() time.Time) auth.TokenConfig {
	cfg := auth.TokenConfig{
		JWKSURL: s.JWKSURL, Issuer: s.JWTIssuer,
		Audience: s.JWTAudience, Claims: s.claims(), MaxLifetime: s.JWTMaxLifetime, Now: now,
	}
	if keys := s.jwtKeys(); len(keys) > 0 {
		cfg.Secret, cfg.OtherSecrets = keys[0], keys[1:]
	}
	return cfg
}

// jwtKeys are FACADE_JWT_SECRET's keys, comma-separated, each kept byte
// for byte: the first signs, all verify (docs/operations.md, "Rotating the
// JWT keys").
func (s settings) jwtKeys() [][]byte {
	if s.JWTSecret == "" {
		return nil
	}
	var keys [][]byte
	for _, k := range strings.Split(s.JWTSecret, ",") {
		keys = append(keys, []byte(k))
	}
	return keys
}

// claims names the claims a principal is read from, in ID tokens and
// bearer tokens alike.
func (s settings) claims() auth.Claims {
	return auth.Claims{User: s.OIDCUserClaim, Role: s.RoleClaim, Groups: s.GroupsClaim}
}

// sessionConfig is the sealed sessions the settings describe: Secure
// cookies unless the public URL is plain http on loopback.
func (s settings) sessionConfig(now func() time.Time) auth.SessionConfig {
	secure := true
	if u, err := url.Parse(s.PublicURL); err == nil {
		secure = auth.SecureCookies(u.Scheme, u.Hostname())
	}
	return auth.SessionConfig{Keys: s.SessionKeys, Lifetime: s.SessionLifetime, Idle: s.SessionIdle, Recheck: s.SessionRecheck, Secure: secure, Now: now}
}

// signInConfig is the relying party the settings describe.
func (s settings) signInConfig(now func() time.Time, log *slog.Logger) auth.SignInConfig {
	return auth.SignInConfig{
		Issuer: s.OIDCIssuer, ClientID: s.OIDCClientID, ClientSecret: s.OIDCClientSecret, Scopes: s.OIDCScopes,
		PublicURL: s.PublicURL, Claims: s.claims(), Now: now, Log: log,
	}
}

// redisConfig says where Redis is, from FACADE_REDIS_URL or
// FACADE_REDIS_ADDRS (+ FACADE_REDIS_MASTER).
func (s settings) redisConfig() redisdb.Config {
	return redisdb.Config{URL: s.RedisURL, Addrs: splitList(s.RedisAddrs), Master: s.RedisMaster}
}
