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
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/sync/errgroup"

	"github.com/facade-dev/facade/accounts"
	"github.com/facade-dev/facade/authz"
	"github.com/facade-dev/facade/grades"
	"github.com/facade-dev/facade/redisdb"
	"github.com/facade-dev/facade/server"
)

// cmdServe is production: every required setting must be present, and it
// never falls back to an in-memory store.
func cmdServe(ctx context.Context, _ []string, stderr io.Writer) error {
	s, err := loadSettings(getenv)
	if err != nil {
		return err
	}
	log := newLogger(stderr, s.LogLevel)
	rdb, err := redisdb.Open(s.redisConfig())
	if err != nil {
		return err
	}
	defer rdb.Close()
	app, err := newApp(ctx, s, rdb, log)
	if err != nil {
		return err
	}
	warnWithoutAOF(ctx, rdb, log)
	return app.serve(ctx, nil)
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
}

// newApp builds every part from the settings. Configuration errors name the
// setting at fault.
func newApp(ctx context.Context, s settings, rdb redis.UniversalClient, log *slog.Logger) (*app, error) {
	origins, err := server.NewOrigins(s.ReadOrigins, withPublicOrigin(s.WriteOrigins, s.PublicURL))
	if err != nil {
		return nil, err
	}
	auth, err := server.NewAuthenticator(ctx, server.AuthConfig{
		Secret: []byte(s.JWTSecret), JWKSURL: s.JWKSURL, Issuer: s.JWTIssuer,
		Audience: s.JWTAudience, RoleClaim: s.RoleClaim,
	})
	if err != nil {
		return nil, err
	}
	az, err := authz.New(s.Model, s.Policy, log)
	if err != nil {
		return nil, fmt.Errorf("FACADE_MODEL/FACADE_POLICY: %w", err)
	}
	builds, upstreamState, err := newBuilds(s, rdb, az, log)
	if err != nil {
		return nil, err
	}
	srv, err := server.New(server.Config{
		Origins: origins, RateLimit: s.RateLimit, MaxTransfer: s.MaxTransfer, OpsOnAPI: s.OpsAddr == s.Addr,
	}, server.Deps{
		Logger: log, Redis: rdb, Auth: auth, Authz: az,
		Grades: grades.NewStore(rdb, log), Accounts: accounts.NewStore(rdb, log),
		Builds: builds, UpstreamState: upstreamState,
	})
	if err != nil {
		return nil, err
	}
	return &app{settings: s, log: log, srv: srv, authz: az, rdb: rdb}, nil
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
		listeners = append(listeners, ln)
		a.log.Info("listening", "addr", ln.Addr().String())
	}
	if ready != nil {
		ready(listeners[0].Addr().String())
	}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return ignoreCanceled(a.authz.Watch(gctx, a.rdb)) })
	for i, hs := range servers {
		ln := listeners[i]
		g.Go(func() error { return ignoreClosed(hs.Serve(ln)) })
	}
	g.Go(func() error {
		<-gctx.Done()
		// SIGTERM: stop accepting, let in-flight requests finish. Every
		// change is one atomic Redis step, so nothing is half-applied.
		sctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
		defer cancel()
		for _, hs := range servers {
			_ = hs.Shutdown(sctx)
		}
		return nil
	})
	return g.Wait()
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

// newLogger returns the JSON logger and routes go-redis's own log lines
// (dial failures while Redis is down) into it, so every line is JSON.
func newLogger(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		l = slog.LevelInfo
	}
	log := slog.New(server.LogHandler(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l})))
	redis.SetLogger(redisLogger{log})
	return log
}

type redisLogger struct{ log *slog.Logger }

func (r redisLogger) Printf(ctx context.Context, format string, v ...any) {
	r.log.WarnContext(ctx, "redis client", "detail", fmt.Sprintf(format, v...))
}
