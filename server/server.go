// Package server is Facade's HTTP layer: the request pipeline of docs/contract.md
// §2 (request id, security headers, CORS, authentication, the
// per-principal rate limit, anti-forgery, input checks), the one error handler that turns
// every failure into a problem body, and thin handlers that validate
// identifiers, ask authz, and call the domain stores. routes.go lists every
// route.
package server

import (
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/facade-dev/facade/accounts"
	"github.com/facade-dev/facade/auth"
	"github.com/facade-dev/facade/authz"
	"github.com/facade-dev/facade/grades"
	"github.com/facade-dev/facade/metrics"
	"github.com/facade-dev/facade/ratelimit"
	"github.com/facade-dev/facade/server/problem"
)

// Config is what the HTTP layer needs from the settings. Every field
// documents what its zero value means.
type Config struct {
	// Origins are the CORS lists (NewOrigins); the zero Origins lets no
	// other origin in.
	Origins Origins
	// RateLimit is the requests per second per principal; 0 disables.
	RateLimit int
	// MaxTransfer is the largest transfer in major units; 0 refuses every
	// amount as over the limit (cmd/facade always sets it).
	MaxTransfer int64
	// OpsOnAPI serves /healthz, /readyz, /metrics on the API handler too;
	// false: only on Ops().
	OpsOnAPI bool
	// AuthFailureLimit is the number of failed authentications per minute
	// per client address; 0 disables.
	AuthFailureLimit int
	// TrustedProxies are the peers whose X-Forwarded-For names the client;
	// nil trusts none (the client is the connection's peer).
	TrustedProxies []*net.IPNet
	// WriteTimeout bounds writing a response (downloads: each write);
	// zero means 30 s.
	WriteTimeout time.Duration
	// Now is the clock the per-principal rate limit (package ratelimit)
	// and the request latencies read; nil means time.Now. Tokens are
	// checked on auth.TokenConfig.Now; cmd/facade passes both the same
	// clock.
	// Write deadlines are set on the connection, by the machine's clock.
	Now func() time.Time
	// Log receives the request and error lines; nil means slog.Default().
	Log *slog.Logger
	// Tracer, with Propagator, makes each API request a server span named
	// by its route template, continuing a caller's W3C traceparent, and
	// puts its trace_id on the request's log lines (internal/tracing).
	// Propagator alone records nothing but continues a caller's trace
	// context (passed on upstream, its trace_id on the log lines). Both
	// nil means no tracing and no per-request cost.
	Tracer     trace.Tracer
	Propagator propagation.TextMapPropagator
	// Metrics are the collectors every part records into (pass the same
	// set to the stores, authz, upstream and cache); /metrics shows them
	// with the Go and process collectors. Nil means a private set.
	Metrics *metrics.Metrics
}

// Deps are the service's collaborators. Redis, Auth and Authz are
// required; SignIn and Sessions go together. Builds may be nil when no
// upstream is configured; the build routes then answer 503.
type Deps struct {
	Redis redis.UniversalClient
	Auth  *auth.Tokens
	// SignIn and Sessions are browser sign-in (package auth); both nil
	// when FACADE_OIDC_ISSUER is not set.
	SignIn   *auth.SignIn
	Sessions *auth.Sessions
	Authz    *authz.Authorizer
	Grades   *grades.Store
	Accounts *accounts.Store
	Builds   BuildHandlers
	// UpstreamState reports the upstream breaker state for /readyz; may be nil.
	UpstreamState func() string
}

// Server is the API's http.Handler.
type Server struct {
	cfg      Config
	log      *slog.Logger
	e        *echo.Echo
	ops      *echo.Echo
	rdb      redis.UniversalClient
	auth     *auth.Tokens
	signin   *auth.SignIn
	sessions *auth.Sessions
	authz    *authz.Authorizer
	grades   *grades.Store
	accounts *accounts.Store
	builds   BuildHandlers
	limiter  *ratelimit.Limiter // per principal; nil: no rate limit
	// authFailures counts failed authentications per client address
	// (authlimit.go); asked only when a token is not in the token cache.
	// Nil: no limit.
	authFailures *ratelimit.Limiter
	upstream     func() string
	metrics      *metrics.Metrics
	gatherer     prometheus.Gatherer
	draining     atomic.Bool
	// tokenFree is every route that needs no token, by the router's match
	// (c.Path()), and opsPaths the ops endpoints, by the request's path:
	// the one list of public routes, filled as routes registers them
	// (routes.go) and read by authenticate (auth.go).
	tokenFree, opsPaths map[string]bool
}

// New builds the server and its routes on the collaborators d, tuned by
// cfg.
func New(d Deps, cfg Config) (*Server, error) {
	if d.Auth == nil || d.Authz == nil || d.Redis == nil {
		return nil, errors.New("server: Auth, Authz and Redis are required")
	}
	if (d.SignIn == nil) != (d.Sessions == nil) {
		return nil, errors.New("server: SignIn and Sessions go together")
	}
	log := cfg.Log
	if log == nil {
		log = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Server{
		cfg: cfg, log: log, rdb: d.Redis, auth: d.Auth, authz: d.Authz, signin: d.SignIn, sessions: d.Sessions,
		grades: d.Grades, accounts: d.Accounts, builds: d.Builds,
		upstream: d.UpstreamState,
	}
	var err error
	if s.limiter, err = s.newRateLimiter(); err != nil {
		return nil, err
	}
	if s.authFailures, err = s.newAuthFailureLimiter(); err != nil {
		return nil, err
	}
	s.metrics = metrics.Or(cfg.Metrics)
	s.gatherer = s.metrics.Registry()
	if s.builds == nil {
		s.builds = noUpstream{}
	}
	s.e = s.newEcho()
	s.ops = s.newEcho()
	s.routes()
	return s, nil
}

func (s *Server) newEcho() *echo.Echo {
	e := echo.New()
	e.HideBanner, e.HidePort, e.Debug = true, true, false
	e.HTTPErrorHandler = problem.Handler(s.log, problem.ErrorMessagesOn(isBambooPath))
	// X-Forwarded-For counts only from FACADE_TRUSTED_PROXIES: the
	// failed-authentication limit is keyed by client address.
	e.IPExtractor = ipExtractor(s.cfg.TrustedProxies)
	return e
}

// Drain marks the instance as leaving: /readyz answers 503 from now on, so
// load balancers stop sending while requests are still accepted.
func (s *Server) Drain() { s.draining.Store(true) }

// ServeHTTP serves the API (and the ops endpoints when OpsOnAPI).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.e.ServeHTTP(w, baseHeaders(w, r))
}

// Ops returns the handler for /healthz, /readyz and /metrics, for a
// separate FACADE_OPS_ADDR.
func (s *Server) Ops() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.ops.ServeHTTP(w, baseHeaders(w, r))
	})
}

// HTTPServer wraps h with the service's limits (docs/contract.md §2, "Limits"). Serve
// it on a Listener(ln) so net/http's own answers are problem bodies too.
func HTTPServer(addr string, h http.Handler) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		IdleTimeout:       120 * time.Second,
		// A backstop for what no route's deadline covers (the ops
		// listener); routes set their own (deadlines.go).
		WriteTimeout: defaultWriteTimeout,
		// Above the service's own 16 KiB check (limitHeaders), so that the
		// service answers oversize headers itself; Listener rewrites what
		// net/http still answers past this.
		MaxHeaderBytes: serverHeaderBytes,
		// "OPTIONS *" would otherwise get net/http's bare 200, without
		// the headers every response carries; the router answers it.
		DisableGeneralOptionsHandler: true,
		// Lets an answer reach its connection to send itself in one
		// write (answeringConn.gather).
		ConnContext: connContext,
	}
}
