// Package server is Facade's HTTP layer: the request pipeline of SPEC
// section 2 (request id, security headers, CORS, authentication, the
// per-principal rate limit, anti-forgery, input checks), the one error handler that turns
// every failure into a problem body, and thin handlers that validate
// identifiers, ask authz, and call the domain stores. routes.go lists every
// route.
package server

import (
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/labstack/echo/v4"
	"github.com/redis/go-redis/v9"

	"github.com/facade-dev/facade/accounts"
	"github.com/facade-dev/facade/authz"
	"github.com/facade-dev/facade/grades"
)

// Config is what the HTTP layer needs from the settings.
type Config struct {
	Origins     Origins
	RateLimit   int   // requests per second per principal; 0 disables
	MaxTransfer int64 // largest transfer in major units
	OpsOnAPI    bool  // serve /healthz, /readyz, /metrics on the API handler too
}

// BuildHandlers serves the build-result routes (package proxy).
type BuildHandlers interface {
	Projects(echo.Context) error
	Results(echo.Context) error
	Artifact(echo.Context) error
}

// Deps are the service's collaborators. Builds may be nil when no upstream
// is configured; the build routes then answer 503.
type Deps struct {
	Logger   *slog.Logger
	Redis    redis.UniversalClient
	Auth     *Authenticator
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
	auth     *Authenticator
	authz    *authz.Authorizer
	grades   *grades.Store
	accounts *accounts.Store
	builds   BuildHandlers
	limiter  *redis_rate.Limiter
	upstream func() string
}

// New builds the server and its routes.
func New(cfg Config, d Deps) (*Server, error) {
	if d.Auth == nil || d.Authz == nil || d.Redis == nil {
		return nil, errors.New("server: Auth, Authz and Redis are required")
	}
	log := d.Logger
	if log == nil {
		log = slog.Default()
	}
	s := &Server{
		cfg: cfg, log: log, rdb: d.Redis, auth: d.Auth, authz: d.Authz,
		grades: d.Grades, accounts: d.Accounts, builds: d.Builds,
		limiter: redis_rate.NewLimiter(d.Redis), upstream: d.UpstreamState,
	}
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
	e.HTTPErrorHandler = s.handleError
	// Never trust X-Forwarded-For from callers: the rate limit is keyed by
	// principal, and logs show the real peer.
	e.IPExtractor = echo.ExtractIPDirect()
	e.Pre(baseHeaders)
	return e
}

// ServeHTTP serves the API (and the ops endpoints when OpsOnAPI).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.e.ServeHTTP(w, r) }

// Ops returns the handler for /healthz, /readyz and /metrics, for a
// separate FACADE_OPS_ADDR.
func (s *Server) Ops() http.Handler { return s.ops }

// HTTPServer wraps h with the limits of SPEC section 2.
func HTTPServer(addr string, h http.Handler) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		IdleTimeout:       120 * time.Second,
		// net/http reads up to MaxHeaderBytes+4096 before refusing, so this
		// makes the effective limit the SPEC's 16 KiB.
		MaxHeaderBytes: 12 << 10,
	}
}
