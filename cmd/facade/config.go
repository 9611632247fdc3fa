package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/facade-dev/facade/auth"
	"github.com/facade-dev/facade/redisdb"
	"github.com/facade-dev/facade/server"
)

// settings are the environment variables of docs/contract.md §1.
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
	PolicyAllowShrink               bool          // FACADE_POLICY_ALLOW_SHRINK=1: accept an empty or halved policy on reload
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
}

// loadSettings reads the environment. Every malformed value is reported
// at once (settingsErrors, a line each naming its variable), so a person
// fixing a deployment fixes them all in one round.
func loadSettings(getenv func(string) string) (settings, error) {
	getenv, fileErrs := readSecretFiles(getenv)
	env := func(k, def string) string {
		if v := strings.TrimSpace(getenv(k)); v != "" {
			return v
		}
		return def
	}
	s := settings{
		Addr: env("FACADE_ADDR", ":8080"), PublicURL: strings.TrimRight(env("FACADE_PUBLIC_URL", ""), "/"),
		RedisURL: env("FACADE_REDIS_URL", ""), RedisAddrs: env("FACADE_REDIS_ADDRS", ""),
		RedisMaster: env("FACADE_REDIS_MASTER", ""),
		UpstreamURL: env("FACADE_UPSTREAM_URL", ""), UpstreamToken: env("FACADE_UPSTREAM_TOKEN", ""),
		JWTSecret: getenv("FACADE_JWT_SECRET"), JWKSURL: env("FACADE_JWKS_URL", ""),
		JWTIssuer: env("FACADE_JWT_ISSUER", ""), JWTAudience: env("FACADE_JWT_AUDIENCE", ""),
		RoleClaim: env("FACADE_ROLE_CLAIM", "role"), GroupsClaim: env("FACADE_GROUPS_CLAIM", "groups"),
		OIDCIssuer: env("FACADE_OIDC_ISSUER", ""), OIDCClientID: env("FACADE_OIDC_CLIENT_ID", ""),
		OIDCClientSecret: getenv("FACADE_OIDC_CLIENT_SECRET"), OIDCUserClaim: env("FACADE_OIDC_USER_CLAIM", "sub"),
		OIDCScopes: strings.Fields(env("FACADE_OIDC_SCOPES", "openid profile email")),
		Model:      env("FACADE_MODEL", "model.conf"), Policy: env("FACADE_POLICY", "policy.csv"),
		PolicyAllowShrink: env("FACADE_POLICY_ALLOW_SHRINK", "") == "1",
		ReadOrigins:       splitList(env("FACADE_CORS_READ_ORIGINS", "*")),
		WriteOrigins:      splitList(env("FACADE_CORS_WRITE_ORIGINS", "")),
		LogLevel:          env("FACADE_LOG_LEVEL", "info"),
	}
	s.OpsAddr = env("FACADE_OPS_ADDR", s.Addr)
	s.OTLPTracesURL = env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	if base := env("OTEL_EXPORTER_OTLP_ENDPOINT", ""); s.OTLPTracesURL == "" && base != "" {
		s.OTLPTracesURL = strings.TrimRight(base, "/") + "/v1/traces"
	}
	bad := settingsErrors(fileErrs)
	durations := []struct {
		dst       *time.Duration
		name, def string
		zeroOK    bool // FACADE_CACHE_STALE=0: never serve stale
	}{
		{&s.UpstreamTimeout, "FACADE_UPSTREAM_TIMEOUT", "10s", false},
		{&s.CacheTTL, "FACADE_CACHE_TTL", "30s", false},
		{&s.CacheStale, "FACADE_CACHE_STALE", "10m", true},
		{&s.CacheFinished, "FACADE_CACHE_FINISHED", "24h", false},
		{&s.LiveInterval, "FACADE_LIVE_INTERVAL", "2s", false},
		{&s.JWTMaxLifetime, "FACADE_JWT_MAX_LIFETIME", "24h", false},
		{&s.DrainDelay, "FACADE_DRAIN_DELAY", "5s", true},
		{&s.SessionLifetime, "FACADE_SESSION_LIFETIME", "8h", false},
		{&s.SessionIdle, "FACADE_SESSION_IDLE", "1h", false},
		{&s.SessionRecheck, "FACADE_SESSION_RECHECK", "15m", false},
		{&s.PolicyUsageFlush, "FACADE_POLICY_USAGE_FLUSH", "5s", true},
	}
	for _, d := range durations {
		v, err := time.ParseDuration(env(d.name, d.def))
		if err != nil || v < 0 || (v == 0 && !d.zeroOK) {
			bad = append(bad, fmt.Errorf("%s must be a positive duration such as 10s", d.name))
		}
		*d.dst = v
	}
	var err error
	if s.RateLimit, err = strconv.Atoi(env("FACADE_RATE_LIMIT", "50")); err != nil || s.RateLimit < 0 {
		bad = append(bad, errors.New("FACADE_RATE_LIMIT must be a whole number of requests per second"))
	}
	if s.AuthFailureLimit, err = strconv.Atoi(env("FACADE_AUTH_FAILURE_LIMIT", "20")); err != nil || s.AuthFailureLimit < 0 {
		bad = append(bad, errors.New("FACADE_AUTH_FAILURE_LIMIT must be a whole number of failures per minute"))
	}
	if s.TrustedProxies, err = parseNetworks(splitList(env("FACADE_TRUSTED_PROXIES", ""))); err != nil {
		bad = append(bad, errors.New("FACADE_TRUSTED_PROXIES must be a comma list of IP addresses or CIDR ranges"))
	}
	if s.MaxTransfer, err = strconv.ParseInt(env("FACADE_MAX_TRANSFER", "1000000"), 10, 64); err != nil || s.MaxTransfer <= 0 {
		bad = append(bad, errors.New("FACADE_MAX_TRANSFER must be a positive whole number of major units"))
	}
	var level slog.Level
	if level.UnmarshalText([]byte(s.LogLevel)) != nil {
		bad = append(bad, errors.New("FACADE_LOG_LEVEL must be one of debug, info, warn, error"))
	}
	if s.SessionKeys, err = auth.ParseKeys(splitList(env("FACADE_SESSION_KEYS", ""))); err != nil {
		bad = append(bad, err)
	}
	if v := getenv("FACADE_POLICY_ALLOW_SHRINK"); v != "" && v != "0" && v != "1" {
		bad = append(bad, errors.New("FACADE_POLICY_ALLOW_SHRINK must be 0 or 1"))
	}
	if len(bad) > 0 {
		return s, bad
	}
	return s, nil
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
	add(s.authConfig(nil).Check())
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

// authConfig is the token check the settings describe, on clock now.
func (s settings) authConfig(now func() time.Time) auth.TokenConfig {
	return auth.TokenConfig{
		Secret: []byte(s.JWTSecret), JWKSURL: s.JWKSURL, Issuer: s.JWTIssuer,
		Audience: s.JWTAudience, Claims: s.claims(), MaxLifetime: s.JWTMaxLifetime, Now: now,
	}
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

// parseNetworks reads "10.0.0.0/8" or a single address ("192.0.2.7").
func parseNetworks(list []string) ([]*net.IPNet, error) {
	var out []*net.IPNet
	for _, v := range list {
		if !strings.Contains(v, "/") {
			ip := net.ParseIP(v)
			if ip == nil {
				return nil, fmt.Errorf("not an address: %q", v)
			}
			bits := 128
			if ip.To4() != nil {
				ip, bits = ip.To4(), 32
			}
			out = append(out, &net.IPNet{IP: ip, Mask: net.CIDRMask(bits, bits)})
			continue
		}
		_, n, err := net.ParseCIDR(v)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}
