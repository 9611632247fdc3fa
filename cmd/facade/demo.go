//go:build demo

package main

import (
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/auth"
	"github.com/facade-dev/facade/auth/demoidp"
	"github.com/facade-dev/facade/upstream/bambootest"
)

// demoSynopsis is the demo's line in `facade --help`.
const demoSynopsis = "run everything in one process with demo data (nothing to install)"

//go:embed demo-seed.json
var demoSeed []byte

// demoTokens are the principals the demo prints tokens for; the demo
// policy (the repository's policy.csv) grants them their access.
var demoTokens = []struct{ name, label, sub, role string }{
	{"STUDENT", "student alice: her own grade", "alice", "student"},
	{"PROFESSOR", "professor bob: grades of students in english-101", "bob", "professor"},
	{"HOLDER", "account holder alice: accounts 1001 (EUR) and 3003 (JPY); she may pay into bob's 2002, never take from it", "alice", "customer"},
	{"DEVELOPER", "developer carol: project PROJ and plan WEB-NIGHTLY", "carol", "developer"},
}

// demoPeople sign in at the demo's own identity provider (auth/demoidp),
// one click each. Their preferred_username is the principal id
// (FACADE_OIDC_USER_CLAIM), so the account holder and the student can both
// be alice with different roles; the policy (policy.csv) grants them the
// same access as the printed tokens.
var demoPeople = []demoidp.Person{
	{Subject: "student-alice", Username: "alice", Name: "Alice, student", Role: "student",
		About: "Student in english-101: sees her own grade."},
	{Subject: "professor-bob", Username: "bob", Name: "Bob, professor", Role: "professor", Groups: []string{"english-staff"},
		About: "Teaches english-101: sees and changes its grades."},
	{Subject: "staff-erin", Username: "erin", Name: "Erin, teaching assistant (view only)", Role: "professor", Groups: []string{"english-graders"},
		About: "Sees english-101's grades; cannot change them."},
	{Subject: "holder-alice", Username: "alice", Name: "Alice, account holder", Role: "customer",
		About: "Holds account 1001; pays into 2002."},
	{Subject: "developer-carol", Username: "carol", Name: "Carol, developer", Role: "developer", Groups: []string{"developers"},
		About: "Sees project PROJ and plan WEB-NIGHTLY, and their artifacts."},
}

// startDemoProvider serves the demo's identity provider on a loopback
// port and points s's sign-in settings at it, with the service as its one
// client (public: PKCE, no secret).
func startDemoProvider(s *settings, log *slog.Logger, now func() time.Time) (func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	issuer := "http://" + ln.Addr().String()
	idp, err := demoidp.New(demoidp.Config{Issuer: issuer, People: demoPeople, Log: log, Now: now, Clients: []demoidp.Client{{
		ID: "facade", RedirectURIs: []string{s.PublicURL + auth.CallbackPath},
		PostLogoutURIs: []string{s.PublicURL + auth.FallbackReturn}, IDTokenLifetime: 8 * time.Hour,
	}}})
	if err != nil {
		ln.Close()
		return nil, err
	}
	hs := &http.Server{Handler: idp, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	s.OIDCIssuer, s.OIDCClientID, s.OIDCClientSecret = issuer, "facade", ""
	s.OIDCUserClaim = "preferred_username"
	s.SessionKeys = [][]byte{randomBytes(32)}
	return func() { _ = hs.Close() }, nil
}

// cmdDemo runs the whole service in one process with nothing installed:
// miniredis for Redis, the Bamboo-compatible test server as upstream, the
// embedded policy, and demo data. It is for trying things out only; serve
// never does any of this.
func cmdDemo(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlags("demo", "facade demo   (FACADE_ADDR picks the address; default 127.0.0.1:8080, or a free port)")
	if err := fs.parse(args, stdout, 0); err != nil {
		return err
	}
	if _, err := loadSettings(getenv); err != nil {
		return err // every malformed FACADE_* value, before anything starts
	}
	mr := miniredis.NewMiniRedis()
	if err := mr.StartAddr("127.0.0.1:0"); err != nil {
		return err
	}
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()

	upstreamToken := randomHex(16)
	upstreamURL, stopUpstream, err := startDemoUpstream(upstreamToken)
	if err != nil {
		return err
	}
	defer stopUpstream()

	dir, err := os.MkdirTemp("", "facade-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	s, err := demoSettings(dir, upstreamURL, upstreamToken, getenv)
	if err != nil {
		return err
	}
	now := time.Now // the one clock every part of the demo reads, the log's lines included
	log := newLogger(stderr, s.LogLevel, now)
	stopProvider, err := startDemoProvider(&s, log, now)
	if err != nil {
		return err
	}
	defer stopProvider()
	demoData, problems := parseSeed(demoSeed)
	if len(problems) > 0 {
		return fmt.Errorf("demo data: %v", problems[0])
	}
	if _, err := seed(ctx, rdb, demoData, log); err != nil {
		return fmt.Errorf("demo data: %w", err)
	}
	app, err := newApp(ctx, s, rdb, log, now)
	if err != nil {
		return err
	}
	return app.serve(ctx, func(addr string) { printDemo(stdout, addr, s, now) })
}

// demoSettings starts from the environment and fills what the demo
// provides itself.
func demoSettings(dir, upstreamURL, upstreamToken string, getenv func(string) string) (settings, error) {
	s, err := loadSettings(getenv)
	if err != nil {
		return s, err
	}
	if getenv("FACADE_ADDR") == "" {
		s.Addr = freeOr("127.0.0.1:8080")
		s.OpsAddr = s.Addr
	}
	if getenv("FACADE_LOG_LEVEL") == "" {
		s.LogLevel = "warn" // keep the terminal for the banner and the user's curl output
	}
	if getenv("FACADE_DRAIN_DELAY") == "" {
		s.DrainDelay = 0 // no load balancer to warn: Ctrl-C stops at once
	}
	s.UpstreamURL, s.UpstreamToken = upstreamURL, upstreamToken
	s.JWTSecret, s.JWKSURL = randomHex(32), ""
	if len(s.WriteOrigins) == 0 {
		s.WriteOrigins = []string{"http://" + s.Addr}
	}
	if s.PublicURL == "" {
		s.PublicURL = "http://" + loopbackAddr(s.Addr)
	}
	s.Model, s.Policy = filepath.Join(dir, "model.conf"), filepath.Join(dir, "policy.csv")
	if err := os.WriteFile(s.Model, facade.DefaultModel, 0o644); err != nil {
		return s, err
	}
	return s, os.WriteFile(s.Policy, facade.DefaultPolicy, 0o644)
}

// demoCommands are the demo build's commands beyond `demo`.
var demoCommands = []command{
	{name: "demo-upstream", synopsis: "serve the demo's Bamboo-compatible upstream alone (compose.yaml): --addr A [--base-url U]",
		run: cmdDemoUpstream},
}

// cmdDemoUpstream serves the demo's Bamboo-compatible upstream as its own
// process, for a deployment of the real service against demo data
// (compose.yaml). It asks for FACADE_UPSTREAM_TOKEN (or _FILE): the
// same token the service sends.
func cmdDemoUpstream(ctx context.Context, c *cmdEnv) error {
	fs := newFlags("demo-upstream", "facade demo-upstream [--addr :8085] [--base-url http://upstream:8085]")
	addr := fs.String("addr", ":8085", "listen address")
	baseURL := fs.String("base-url", "", "the URL the service reaches it at, for the links in its answers (default http://ADDR)")
	if err := fs.parse(c.args, c.stdout, 0); err != nil {
		return err
	}
	s, err := loadSettings(c.getenv)
	if err != nil {
		return err
	}
	if s.UpstreamToken == "" {
		return settingsErrors{errors.New("FACADE_UPSTREAM_TOKEN (or FACADE_UPSTREAM_TOKEN_FILE) must be set: the token the service sends")}
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	if *baseURL == "" {
		*baseURL = "http://" + loopbackAddr(ln.Addr().String())
	}
	bt := bambootest.New(bambootest.WithToken(s.UpstreamToken), bambootest.WithBaseURL(*baseURL))
	bambootest.DemoData(bt)
	hs := &http.Server{Handler: bt, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		_ = hs.Close()
	}()
	fmt.Fprintf(c.stdout, "demo upstream listening on %s\n", ln.Addr())
	if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// startDemoUpstream serves the Bamboo-compatible server with demo projects
// on a loopback port.
func startDemoUpstream(token string) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	base := "http://" + ln.Addr().String()
	bt := bambootest.New(bambootest.WithToken(token), bambootest.WithBaseURL(base))
	bambootest.DemoData(bt)
	hs := &http.Server{Handler: bt, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	return base, func() { _ = hs.Close() }, nil
}

// freeOr returns addr when it can be bound, else a free loopback port, so
// the demo starts even when 8080 is taken.
func freeOr(addr string) string {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			return addr
		}
	}
	defer ln.Close()
	return ln.Addr().String()
}

func printDemo(w io.Writer, addr string, s settings, now func() time.Time) {
	base := "http://" + addr
	fmt.Fprintf(w, "Facade demo is running.\n\n  API:     %[1]s\n  page:    %[1]s/ui/\n  API description (OpenAPI 3.1): %[1]s/openapi.json\n  health:  %[1]s/readyz\n", base)
	fmt.Fprintf(w, "\nSign in on the page: open %s/ui/, choose \"Sign in\", then pick a person at the demo's\nidentity provider (%s, one click, no password):\n", base, s.OIDCIssuer)
	for _, p := range demoPeople {
		fmt.Fprintf(w, "  - %s: %s\n", p.Name, p.About)
	}
	fmt.Fprintf(w, "\nTokens (valid 12h) for curl, or for the page's \"use a token\", ready to paste into a shell:\n")
	for _, t := range demoTokens {
		tok, err := auth.Mint([]byte(s.JWTSecret), t.sub, t.role, s.claims(), 12*time.Hour, auth.WithNow(now))
		if err != nil {
			continue
		}
		fmt.Fprintf(w, "\n  # %s\n  export %s=%s\n", t.label, t.name, tok)
	}
	fmt.Fprintf(w, `
Try:
  curl -H "Authorization: Bearer $STUDENT" %[1]s/student/alice/english/grade
  curl -X PUT -H "Authorization: Bearer $PROFESSOR" -H "X-XSRF-TOKEN: demo" -H "Content-Type: application/json" \
       -d '{"grade":"A-"}' %[1]s/student/alice/english/grade
  curl -H "Authorization: Bearer $HOLDER" %[1]s/rs/account/1001/balance
  curl -X POST -H "Authorization: Bearer $HOLDER" -H "X-XSRF-TOKEN: demo" %[1]s/rs/transfer/from/1001/to/2002/amount/12.50
  curl -H "Authorization: Bearer $DEVELOPER" '%[1]s/rest/api/latest/project?expand=projects.project.plans'

Logs (JSON) go to stderr at FACADE_LOG_LEVEL (demo default: warn). Press Ctrl-C to stop.
`, base)
}

func randomHex(n int) string { return hex.EncodeToString(randomBytes(n)) }

func randomBytes(n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(errors.New("no randomness available"))
	}
	return b
}

// loopbackAddr names addr's host as 127.0.0.1 when it listens on every
// interface (":8080"), for a URL a browser on this machine can open.
func loopbackAddr(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || (host != "" && host != "0.0.0.0" && host != "::") {
		return addr
	}
	return net.JoinHostPort("127.0.0.1", port)
}
