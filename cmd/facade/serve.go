package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel"
	"golang.org/x/sync/errgroup"

	"github.com/facade-dev/facade/accounts"
	"github.com/facade-dev/facade/auth"
	"github.com/facade-dev/facade/authz"
	"github.com/facade-dev/facade/grades"
	"github.com/facade-dev/facade/internal/jsonlog"
	"github.com/facade-dev/facade/internal/logbuf"
	"github.com/facade-dev/facade/internal/tracing"
	"github.com/facade-dev/facade/metrics"
	"github.com/facade-dev/facade/redisdb"
	"github.com/facade-dev/facade/server"
)

// cmdServe is production: every required setting must be present, and it
// never falls back to an in-memory store.
func cmdServe(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlags("serve", "facade serve   (settings: FACADE_* environment variables, README.md)")
	if err := fs.parse(args, stdout, 0); err != nil {
		return err
	}
	s, err := loadSettings(getenv)
	if err = s.checkService(err); err != nil {
		return err
	}
	// Log lines are batched (at most 50 ms late; package logbuf says what
	// that costs and saves) and flushed when serve returns.
	logs := logbuf.New(stderr, 50*time.Millisecond, 64<<10)
	defer logs.Close()
	now := time.Now // the one clock every part reads, the log's lines included
	log := newLogger(logs, s.LogLevel, now)
	rdb, err := redisdb.Open(s.redisConfig())
	if err != nil {
		return err
	}
	defer rdb.Close()
	app, err := newApp(ctx, s, rdb, log, now)
	if err != nil {
		return err
	}
	warnWithoutAOF(ctx, rdb, log)
	warnPageCannotWrite(s, log)
	return app.serve(ctx, nil)
}

// warnPageCannotWrite says at start-up that the service's own page will be
// refused every change (403 origin-refused, the page's "may not make
// changes from where it was opened"): a browser sends the page's origin
// with a write, and no origin may write without FACADE_PUBLIC_URL or
// FACADE_CORS_WRITE_ORIGINS; the request's Host is never trusted for it.
func warnPageCannotWrite(s settings, log *slog.Logger) {
	if len(withPublicOrigin(s.WriteOrigins, s.PublicURL)) > 0 {
		return
	}
	log.Warn("the page cannot change anything: browsers' writes are refused (403 origin-refused) until FACADE_PUBLIC_URL names the address people open it at (or FACADE_CORS_WRITE_ORIGINS lists that origin)")
}

// warnWithoutAOF logs when Redis would lose money on a restart.
func warnWithoutAOF(ctx context.Context, rdb redis.UniversalClient, log *slog.Logger) {
	cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	on, err := redisdb.AppendOnly(cctx, rdb)
	switch {
	case err != nil:
		log.Warn("could not read Redis persistence setting", "err", err.Error())
	case !on:
		log.Warn("Redis runs without AOF persistence (appendonly no): account balances and transfers can be lost on a restart")
	}
}

// app is the assembled service.
type app struct {
	settings settings
	log      *slog.Logger
	srv      *server.Server
	authz    *authz.Authorizer
	rdb      redis.UniversalClient
	tracing  *tracing.Tracing
}

// newApp builds every part from the settings. Configuration errors name the
// setting at fault.
// now is the one clock the parts that keep time read.
func newApp(ctx context.Context, s settings, rdb redis.UniversalClient, log *slog.Logger, now func() time.Time) (*app, error) {
	origins, err := server.NewOrigins(s.ReadOrigins, withPublicOrigin(s.WriteOrigins, s.PublicURL))
	if err != nil {
		return nil, err
	}
	tcfg := s.authConfig(now)
	tcfg.Log, tcfg.Redis = log, rdb // revocations: facade sessions revoke
	tokens, err := auth.NewTokens(ctx, tcfg)
	if err != nil {
		return nil, err
	}
	m := metrics.New() // one set, shown on /metrics, recorded into by every part
	signin, sessions, err := newSignIn(ctx, s, rdb, log, now, m)
	if err != nil {
		return nil, err
	}
	// facade_redis_up, asked at every scrape (docs/operations.md, "Alerts").
	m.ProbeRedis(func(ctx context.Context) error { return rdb.Ping(ctx).Err() })
	info, _ := debug.ReadBuildInfo()
	version, commit := buildStamp(info)
	m.SetBuild(version, commit, runtime.Version())
	tr, err := tracing.Setup(ctx, s.OTLPTracesURL, version)
	if err != nil {
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_ENDPOINT: %w", err)
	}
	logOTelErrors(log)
	if tr.Recording() { // nothing recorded: no hook; the caller's context is only passed on
		rdb.AddHook(tr.RedisHook())
	}
	az, err := authz.New(s.Model, s.Policy, authz.Config{Log: log, Metrics: m, Now: now, RecordUsage: s.PolicyUsageFlush > 0})
	if err != nil {
		return nil, fmt.Errorf("FACADE_MODEL/FACADE_POLICY: %w", err)
	}
	az.AllowShrink(s.PolicyAllowShrink)
	// The shrink guard at start-up too, against the last policy this
	// Redis saw (a fresh instance beside ones running a longer policy).
	if err := az.GuardShared(ctx, rdb); err != nil {
		return nil, fmt.Errorf("FACADE_POLICY: %w", err)
	}
	builds, hist, upstreamState, err := newBuilds(s, rdb, az, log, m, now, tr)
	if err != nil {
		return nil, err
	}
	srv, err := server.New(server.Deps{
		Redis: rdb, Auth: tokens, SignIn: signin, Sessions: sessions, Authz: az,
		Grades:   grades.NewStore(rdb, grades.Config{Log: log, Now: now}),
		Accounts: accounts.NewStore(rdb, accounts.Config{Log: log, Metrics: m, Now: now}),
		Builds:   builds, History: hist, UpstreamState: upstreamState,
	}, server.Config{
		Origins: origins, RateLimit: s.RateLimit, MaxTransfer: s.MaxTransfer, OpsOnAPI: s.OpsAddr == s.Addr,
		AuthFailureLimit: s.AuthFailureLimit, TrustedProxies: s.TrustedProxies, Now: now,
		Log: log, Metrics: m, Tracer: tr.Tracer, Propagator: tr.Propagator,
	})
	if err != nil {
		return nil, err
	}
	return &app{settings: s, log: log, srv: srv, authz: az, rdb: rdb, tracing: tr}, nil
}

// newSignIn builds browser sign-in when FACADE_OIDC_ISSUER is set (both
// nil otherwise): the sealed sessions and the relying party, which reads
// the provider's discovery document now, so a wrong issuer stops start-up.
func newSignIn(ctx context.Context, s settings, rdb redis.UniversalClient, log *slog.Logger, now func() time.Time, m *metrics.Metrics) (*auth.SignIn, *auth.Sessions, error) {
	if s.OIDCIssuer == "" {
		return nil, nil, nil
	}
	sessions, err := auth.NewSessions(rdb, s.sessionConfig(now))
	if err != nil {
		return nil, nil, err
	}
	cfg := s.signInConfig(now, log)
	cfg.Metrics = m
	signin, err := auth.NewSignIn(ctx, sessions, cfg)
	if err != nil {
		return nil, nil, err
	}
	return signin, sessions, nil
}

// logOTelErrors makes what OpenTelemetry reports (an export the collector
// refused or that could not reach it) a JSON line of the service's log:
// its default handler prints plain text into the JSON log
// (docs/operations.md, "Tracing"). The handler is the process's one, so
// the last serve started writes them.
func logOTelErrors(log *slog.Logger) {
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		log.Warn("OpenTelemetry could not export spans", "err", err.Error())
	}))
}

// withPublicOrigin adds the service's own public origin to the write
// origins: a page it serves itself may change data. Nothing else is
// trusted implicitly (not even the request's Host).
func withPublicOrigin(write []string, publicURL string) []string {
	u, err := url.Parse(publicURL)
	if publicURL == "" || err != nil || u.Scheme == "" || u.Host == "" {
		return write
	}
	return append(write, u.Scheme+"://"+u.Host)
}

// serve listens until ctx ends, then drains in-flight requests. ready, when
// not nil, receives the API's bound address once it listens.
func (a *app) serve(ctx context.Context, ready func(apiAddr string)) error {
	servers := []*http.Server{server.HTTPServer(a.settings.Addr, a.srv)}
	if a.settings.OpsAddr != a.settings.Addr {
		servers = append(servers, server.HTTPServer(a.settings.OpsAddr, a.srv.Ops()))
	}
	listeners := make([]net.Listener, 0, len(servers))
	for _, hs := range servers {
		ln, err := net.Listen("tcp", hs.Addr)
		if err != nil {
			for _, l := range listeners {
				_ = l.Close()
			}
			return fmt.Errorf("listen on %s: %w", hs.Addr, err)
		}
		listeners = append(listeners, server.Listener(ln))
		a.log.Info("listening", "addr", ln.Addr().String())
	}
	if ready != nil {
		ready(listeners[0].Addr().String())
	}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return ignoreCanceled(a.authz.Watch(gctx, a.rdb)) })
	g.Go(func() error { a.authz.RecordUsage(gctx, a.rdb, a.settings.PolicyUsageFlush); return nil })
	for i, hs := range servers {
		ln := listeners[i]
		g.Go(func() error { return ignoreClosed(hs.Serve(ln)) })
	}
	g.Go(func() error {
		<-gctx.Done()
		a.drain(servers)
		return nil
	})
	err := g.Wait()
	a.flushUsage()
	a.flushSpans()
	return err
}

// flushSpans sends the spans still queued, after the last request.
func (a *app) flushSpans() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := a.tracing.Shutdown(ctx); err != nil {
		a.log.Warn("could not send the last spans", "err", err.Error())
	}
}

// flushUsage writes the policy usage counted since the last flush, after
// the last request was answered, so a graceful stop loses none.
func (a *app) flushUsage() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := a.authz.FlushUsage(ctx, a.rdb); err != nil {
		a.log.Warn("could not write the last policy usage counts to Redis", "err", err.Error())
	}
}

// drain is the SIGTERM sequence: /readyz turns 503 and connections stop
// being kept alive while the listeners still accept for
// FACADE_DRAIN_DELAY (the time a load balancer needs to notice); then the
// listeners close and in-flight requests finish (25 s at most). Every
// change is one atomic Redis step, so nothing is half-applied.
func (a *app) drain(servers []*http.Server) {
	start := time.Now()
	a.log.Info("drain started", "delay", a.settings.DrainDelay.String())
	a.srv.Drain()
	for _, hs := range servers {
		hs.SetKeepAlivesEnabled(false)
	}
	time.Sleep(a.settings.DrainDelay)
	sctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for _, hs := range servers {
		wg.Go(func() { _ = hs.Shutdown(sctx) })
	}
	wg.Wait()
	a.log.Info("drain finished", "duration_ms", time.Since(start).Milliseconds(),
		"complete", sctx.Err() == nil)
}

func ignoreClosed(err error) error {
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

func ignoreCanceled(err error) error {
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// newLogger returns the JSON logger, its lines stamped by now, and routes
// go-redis's own log lines (dial failures while Redis is down) into it, so
// every line is JSON.
func newLogger(w io.Writer, level string, now func() time.Time) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		l = slog.LevelInfo
	}
	h := jsonlog.New(w, l, now)
	if b, ok := w.(*logbuf.Writer); ok {
		h = flushOnWarn{h, b.Flush}
	}
	log := slog.New(server.LogHandler(h))
	redis.SetLogger(redisLogger{log})
	return log
}

// flushOnWarn writes warnings and errors out at once: they are rare, and
// neither an operator nor a crash should wait for the next batch.
type flushOnWarn struct {
	slog.Handler
	flush func()
}

func (h flushOnWarn) Handle(ctx context.Context, r slog.Record) error {
	err := h.Handler.Handle(ctx, r)
	if r.Level >= slog.LevelWarn {
		h.flush()
	}
	return err
}

func (h flushOnWarn) WithAttrs(as []slog.Attr) slog.Handler {
	return flushOnWarn{h.Handler.WithAttrs(as), h.flush}
}
func (h flushOnWarn) WithGroup(name string) slog.Handler {
	return flushOnWarn{h.Handler.WithGroup(name), h.flush}
}

type redisLogger struct{ log *slog.Logger }

func (r redisLogger) Printf(ctx context.Context, format string, v ...any) {
	r.log.WarnContext(ctx, "redis client", "detail", fmt.Sprintf(format, v...))
}
