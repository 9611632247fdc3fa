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
	"time"

	"github.com/labstack/echo/v4"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/facade-dev/facade/accounts"
	"github.com/facade-dev/facade/auth"
	"github.com/facade-dev/facade/authz"
	"github.com/facade-dev/facade/grades"
	"github.com/facade-dev/facade/metrics"
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
	// History answers a plan's builds over time; nil when Builds is
	// (its routes then answer 503).
	History BuildHistory
	// UpstreamState reports the upstream breaker state for /readyz; may be nil.
	UpstreamState func() string
}

// Server is the API's http.Handler. It holds the two routers; each area's
// handlers hold only the stores that area uses (grades.go, accounts.go,
// builds.go, signin.go, ops.go), and each stage of the pipeline its own
// settings (auth.go, cors.go, ratelimit.go, middleware.go).
// routes.go wires them into every route, in one place.
type Server struct {
	api, ops *echo.Echo
	health   *opsHandlers // Drain turns its /readyz to 503
}

// areas are the handlers of each area of the API, as routes mounts them.
type areas struct {
	grades   *gradeHandlers
	accounts *accountHandlers
	builds   *bambooHandlers
	history  *historyHandlers
	signIn   *signInHandlers
	ops      *opsHandlers
}

// stages are the pipeline's middleware (docs/contract.md §2), each built
// from its own settings; routes gives their order.
type stages struct {
	observe   *observer
	deadlines writeDeadlines
	origins   Origins
	authn     *authenticator
	limit     principalLimit
}

// bambooHandlers serve the build routes (builds.go) from package proxy.
type bambooHandlers struct{ builds BuildHandlers }

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
	m := metrics.Or(cfg.Metrics)
	limiter, err := newRateLimiter(d.Redis, cfg, log)
	if err != nil {
		return nil, err
	}
	failures, err := newFailureLimit(d.Redis, cfg, log)
	if err != nil {
		return nil, err
	}
	builds := d.Builds
	if builds == nil {
		builds = noUpstream{}
	}
	a := areas{
		grades:   &gradeHandlers{gate: gate{d.Authz}, grades: d.Grades},
		accounts: &accountHandlers{gate: gate{d.Authz}, accounts: d.Accounts, maxTransfer: cfg.MaxTransfer},
		builds:   &bambooHandlers{builds: builds},
		history:  &historyHandlers{gate: gate{d.Authz}, history: d.History},
		signIn:   &signInHandlers{signin: d.SignIn, az: d.Authz, failures: failures, log: log},
		ops:      &opsHandlers{rdb: d.Redis, az: d.Authz, upstream: d.UpstreamState},
	}
	p := stages{
		observe:   &observer{log: log, now: cfg.Now, metrics: m, tracer: cfg.Tracer, propagator: cfg.Propagator},
		deadlines: writeDeadlines{timeout: cfg.WriteTimeout},
		origins:   cfg.Origins,
		authn: &authenticator{tokens: d.Auth, signin: d.SignIn, sessions: d.Sessions, failures: failures, log: log,
			tokenFree: map[string]bool{}, opsPaths: map[string]bool{}},
		limit: principalLimit{limiter: limiter},
	}
	if p.deadlines.timeout <= 0 {
		p.deadlines.timeout = defaultWriteTimeout
	}
	s := &Server{api: newEcho(log, cfg.TrustedProxies), ops: newEcho(log, cfg.TrustedProxies), health: a.ops}
	s.routes(a, p, cfg.OpsOnAPI, m.Registry())
	return s, nil
}

func newEcho(log *slog.Logger, trustedProxies []*net.IPNet) *echo.Echo {
	e := echo.New()
	e.HideBanner, e.HidePort, e.Debug = true, true, false
	e.HTTPErrorHandler = problem.Handler(log, problem.ErrorMessagesOn(isBambooPath))
	// X-Forwarded-For counts only from FACADE_TRUSTED_PROXIES: the
	// failed-authentication limit is keyed by client address.
	e.IPExtractor = ipExtractor(trustedProxies)
	return e
}

// Drain marks the instance as leaving: /readyz answers 503 from now on, so
// load balancers stop sending while requests are still accepted.
func (s *Server) Drain() { s.health.draining.Store(true) }

// ServeHTTP serves the API (and the ops endpoints when OpsOnAPI).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.api.ServeHTTP(w, baseHeaders(w, r))
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
		// listener); routes set their own (writeDeadlines, middleware.go).
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
