package server_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/facade-dev/facade/accounts"
	"github.com/facade-dev/facade/auth"
	"github.com/facade-dev/facade/authz"
	"github.com/facade-dev/facade/cache"
	"github.com/facade-dev/facade/favourites"
	"github.com/facade-dev/facade/grades"
	"github.com/facade-dev/facade/internal/jsonlog"
	"github.com/facade-dev/facade/internal/logbuf"
	"github.com/facade-dev/facade/internal/testkit/testlog"
	"github.com/facade-dev/facade/internal/testkit/testredis"
	"github.com/facade-dev/facade/metrics"
	"github.com/facade-dev/facade/proxy"
	"github.com/facade-dev/facade/proxy/history"
	"github.com/facade-dev/facade/server"
	"github.com/facade-dev/facade/upstream"
	"github.com/facade-dev/facade/upstream/bambootest"
)

// TestMain runs the tests and then, when the whole package ran, requires
// that every operation of /openapi.json had a success answer validated
// against it by some test (see checkAgainstOpenAPI), and that every code
// of the error table was answered to some test (see checkProblem).
func TestMain(m *testing.M) {
	code := testredis.Run(m)
	if code == 0 && flag.Lookup("test.run").Value.String() == "" {
		if missing := unvalidatedOperations(); len(missing) > 0 {
			fmt.Fprintf(os.Stderr, "FAIL: no test validated a success answer of these /openapi.json operations:\n  %s\n",
				strings.Join(missing, "\n  "))
			code = 1
		}
		if missing := unproducedCodes(); len(missing) > 0 {
			fmt.Fprintf(os.Stderr, "FAIL: no test received these error codes (or errors rules) of server/problem's table:\n  %s\n",
				strings.Join(missing, "\n  "))
			code = 1
		}
	}
	os.Exit(code)
}

var testSecret = []byte("test-secret-that-is-at-least-32-bytes-long!")

// testPolicy is the policy every server test runs against. Comments name
// who is who.
const testPolicy = `# bob teaches english-101 (view + update); erin may only view it
p, bob, class:english-101, view
p, bob, class:english-101, update
p, erin, class:english-101, view
# frank teaches history-201 through a group
p, team:history, class:history-201, update
p, team:history, class:history-201, view
p, team:history, class:history-201, post
g, frank, team:history
# enrollments: ghost is enrolled but has no grade yet
g, student:alice, class:english-101
g, student:ghost, class:english-101
g, student:dave, class:history-201
# accounts
p, alice, account:1001, view_account
p, alice, account:1001, transfer
p, alice, account:2002, transfer
p, alice, account:ghost-acct, view_account
p, alice, account:ghost-acct, transfer
# mallory debits her own m1 and may pay into 2002 (receive), never take from it
p, mallory, account:m1, view_account
p, mallory, account:m1, transfer
p, mallory, account:2002, receive
# auditors see every account (a wildcard grant), through a group
p, group:auditors, account:*, view_account
g, ida, group:auditors
# builds
p, team:platform, project:PROJ, view
p, carol, plan:WEB-NIGHTLY, view
g, carol, team:platform
`

const modelFile = "../model.conf"

// env is one running server on a fresh Redis database.
type env struct {
	t    testing.TB
	url  string
	rdb  *redis.Client
	srv  *server.Server
	logs *testlog.Buffer
	// bamboo is the upstream when the env was built withBuilds.
	bamboo    *bambootest.Server
	bambooURL string
	// bodies collects every error body the test saw, for the leak scan.
	mu     sync.Mutex
	bodies []string
}

// envConfig is what options may change before the server is built.
type envConfig struct {
	server server.Config
	auth   auth.TokenConfig
	builds bool // wire the build endpoints to a Bamboo-compatible upstream
	// upstreamTimeout bounds upstream calls (default 2s).
	upstreamTimeout time.Duration
	// rdb replaces the shared test Redis (to stop it mid-test).
	rdb *redis.Client
	// pageWrites, when not nil, makes the write origins these plus the
	// server's own origin (as FACADE_PUBLIC_URL does), so /ui/ may write.
	pageWrites []string
	// policy is the policy file's text (default testPolicy); model, when
	// set, replaces model.conf's text.
	policy, model string
	// signIn, when not nil, turns browser sign-in on (signin_test.go).
	signIn *signInEnv
	// logTo, when not nil, takes the server's log as production writes it
	// (internal/jsonlog) instead of env.logs (benchmarks).
	logTo io.Writer
	// upstream, when set, is the Bamboo of withBuilds (another instance's,
	// withUpstreamOf); fill fills a new one instead of the demo data.
	upstream   *env
	fill       func(*bambootest.Server)
	bambooOpts []bambootest.Option
	// now, when set, is the build cache's and handlers' clock, and the
	// cache and handlers are tuned as `facade serve` tunes them by default
	// (TTL 30 s, stale 10 m, in-process copies for a document's lifetime).
	now func() time.Time
}

// withUpstreamOf makes the server a second instance beside other: the same
// Bamboo (and, with withRedis(other.rdb), the same shared cache).
func withUpstreamOf(other *env) envOption {
	return func(c *envConfig) { c.builds, c.upstream = true, other }
}

// withOrganization fills the Bamboo of withBuilds, made with opts, with
// fill instead of the demo data (bambootest.Organization).
func withOrganization(fill func(*bambootest.Server), opts ...bambootest.Option) envOption {
	return func(c *envConfig) { c.builds, c.fill, c.bambooOpts = true, fill, opts }
}

// withBuildClock runs the build cache on now, with serve's in-process
// copies (see envConfig.now).
func withBuildClock(now func() time.Time) envOption { return func(c *envConfig) { c.now = now } }

type envOption func(*envConfig)

func withWriteOrigins(o ...string) envOption {
	return func(c *envConfig) { c.server.Origins, _ = server.NewOrigins([]string{"*"}, o) }
}

func withReadOrigins(o ...string) envOption {
	return func(c *envConfig) { c.server.Origins, _ = server.NewOrigins(o, []string{"https://app.example"}) }
}

func withRateLimit(n int) envOption { return func(c *envConfig) { c.server.RateLimit = n } }

func withAuth(a auth.TokenConfig) envOption { return func(c *envConfig) { c.auth = a } }

func withUpstreamTimeout(d time.Duration) envOption {
	return func(c *envConfig) { c.upstreamTimeout = d }
}

func withAuthFailureLimit(n int, trusted ...*net.IPNet) envOption {
	return func(c *envConfig) { c.server.AuthFailureLimit, c.server.TrustedProxies = n, trusted }
}

func withWriteTimeout(d time.Duration) envOption {
	return func(c *envConfig) { c.server.WriteTimeout = d }
}

// withRedis runs the server on rdb, for tests that stop their Redis.
func withRedis(rdb *redis.Client) envOption { return func(c *envConfig) { c.rdb = rdb } }

// withPageOrigin lets the server's own origin (the page at /ui/) and the
// given others write; reads stay open to any origin.
func withPageOrigin(others ...string) envOption {
	return func(c *envConfig) { c.pageWrites = append([]string{}, others...) }
}

// withPolicyLines adds lines to testPolicy, for a test that needs a
// principal of its own.
func withPolicyLines(lines ...string) envOption {
	return func(c *envConfig) { c.policy += strings.Join(lines, "\n") + "\n" }
}

// withModel runs the server on this model and policy instead of
// model.conf and testPolicy (a deny model, say).
func withModel(model, policy string) envOption {
	return func(c *envConfig) { c.model, c.policy = model, policy }
}

// withClock runs the server (its rate limit, latencies and log lines) on
// now.
func withClock(now func() time.Time) envOption { return func(c *envConfig) { c.server.Now = now } }

// withProductionLog writes the server's log lines to w as `facade serve`
// does (internal/jsonlog, info), for benchmarks of the production path.
func withProductionLog(w io.Writer) envOption { return func(c *envConfig) { c.logTo = w } }

// withProductionLogFile writes the log at info to a file in tb's temporary
// directory, batched as facade serve batches its log (logbuf, 50 ms,
// 64 KiB): what the benchmarks on the production path pay for a line.
func withProductionLogFile(tb testing.TB) envOption {
	tb.Helper()
	logs, err := os.Create(filepath.Join(tb.TempDir(), "facade.log"))
	if err != nil {
		tb.Fatal(err)
	}
	buffered := logbuf.New(logs, 50*time.Millisecond, 64<<10)
	tb.Cleanup(func() { buffered.Close(); logs.Close() })
	return withProductionLog(buffered)
}

// withBuilds starts the Bamboo-compatible test upstream with the demo
// projects (PROJ, WEB, MOBILE, INFRA) and wires the build endpoints to it.
func withBuilds() envOption { return func(c *envConfig) { c.builds = true } }

func newEnv(t testing.TB, opts ...envOption) *env {
	t.Helper()
	origins, _ := server.NewOrigins([]string{"*"}, []string{"https://app.example"})
	cfg := envConfig{
		server:          server.Config{Origins: origins, RateLimit: 0, MaxTransfer: 1_000_000, OpsOnAPI: true},
		auth:            auth.TokenConfig{Secret: testSecret},
		upstreamTimeout: 10 * time.Second, // no test waits for it; a loaded machine may need it
		policy:          testPolicy,
	}
	for _, o := range opts {
		o(&cfg)
	}
	dir := t.TempDir()
	policy, model := filepath.Join(dir, "policy.csv"), modelFile
	if err := os.WriteFile(policy, []byte(cfg.policy), 0o644); err != nil {
		t.Fatal(err)
	}
	if cfg.model != "" {
		model = filepath.Join(dir, "model.conf")
		if err := os.WriteFile(model, []byte(cfg.model), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	logs := &testlog.Buffer{}
	log := slog.New(server.LogHandler(slog.NewJSONHandler(logs, nil)))
	if cfg.logTo != nil {
		log = slog.New(server.LogHandler(jsonlog.New(cfg.logTo, slog.LevelInfo, cfg.server.Now)))
	}
	m := metrics.New() // this server's own set: tests never share counters
	az, err := authz.New(model, policy, authz.Config{Log: log, Metrics: m})
	if err != nil {
		t.Fatalf("authz: %v", err)
	}
	rdb := cfg.rdb
	if rdb == nil {
		rdb = testredis.Client(t)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if cfg.auth.Log == nil {
		cfg.auth.Log = log
	}
	tokens, err := auth.NewTokens(ctx, cfg.auth)
	if err != nil {
		t.Fatalf("auth: %v", err)
	}
	deps := server.Deps{
		Redis: rdb, Auth: tokens, Authz: az,
		Grades: grades.NewStore(rdb, grades.Config{Log: log}), Accounts: accounts.NewStore(rdb, accounts.Config{Log: log, Metrics: m}),
	}
	e := &env{t: t, rdb: rdb, logs: logs}
	if cfg.builds {
		switch {
		case cfg.upstream != nil:
			e.bamboo, e.bambooURL = cfg.upstream.bamboo, cfg.upstream.bambooURL
		case cfg.fill != nil:
			var ts *httptest.Server
			e.bamboo, ts = bambootest.NewTestServer(t, append(cfg.bambooOpts, bambootest.WithToken(bambooToken))...)
			cfg.fill(e.bamboo)
			e.bambooURL = ts.URL
		default:
			e.bamboo, e.bambooURL = startBamboo(t)
		}
		up, err := upstream.New(upstream.Config{BaseURL: e.bambooURL, Token: bambooToken, Timeout: cfg.upstreamTimeout, Metrics: m, Log: log})
		if err != nil {
			t.Fatal(err)
		}
		cc := cache.Config{TTL: time.Minute, Stale: time.Minute, Metrics: m, Log: log, Now: cfg.now}
		pc := proxy.Config{Favourites: favourites.New(rdb, favourites.Config{}), Log: log, Now: cfg.now}
		if cfg.now != nil { // as facade serve: its default TTL and stale window, copies kept for the TTL
			cc.TTL, cc.Stale, pc.CacheTTL = 30*time.Second, 10*time.Minute, 30*time.Second
		}
		c := cache.New(rdb, cc)
		deps.Builds = proxy.New(up, c, az, pc)
		deps.History = history.New(up, c, history.Config{})
		deps.UpstreamState = func() string { return up.BreakerState().String() }
	}
	ts := httptest.NewUnstartedServer(nil) // its address is the page's origin
	if cfg.pageWrites != nil {
		cfg.server.Origins, _ = server.NewOrigins([]string{"*"}, append(cfg.pageWrites, "http://"+ts.Listener.Addr().String()))
	}
	if cfg.signIn != nil {
		deps.SignIn, deps.Sessions = cfg.signIn.start(t, "http://"+ts.Listener.Addr().String(), log, rdb)
	}
	cfg.server.Log, cfg.server.Metrics = log, m
	srv, err := server.New(deps, cfg.server)
	if err != nil {
		t.Fatal(err)
	}
	ts.Config = server.HTTPServer("", srv)
	ts.Listener = server.Listener(ts.Listener)
	ts.Start()
	t.Cleanup(ts.Close)
	e.url, e.srv = ts.URL, srv
	t.Cleanup(e.scanBodies)
	return e
}

const bambooToken = "service-token-for-bamboo"

func startBamboo(t testing.TB) (*bambootest.Server, string) {
	t.Helper()
	bt, ts := bambootest.NewTestServer(t, bambootest.WithToken(bambooToken))
	bambootest.DemoData(bt)
	return bt, ts.URL
}

func token(t testing.TB, sub, role string) string {
	t.Helper()
	tok, err := auth.Mint(testSecret, sub, role, auth.Claims{}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// req describes one call.
type req struct {
	method, path, token, body string
	header                    map[string]string
}

type resp struct {
	status int
	header http.Header
	body   string
}

func (r resp) problem(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(r.body), &m); err != nil {
		t.Fatalf("body is not JSON: %q", r.body)
	}
	return m
}

// do sends r. A state-changing request gets the anti-forgery header and a
// JSON content type unless the test set its own.
func (e *env) do(r req) resp {
	e.t.Helper()
	var body io.Reader
	if r.body != "" {
		body = strings.NewReader(r.body)
	}
	hr, err := http.NewRequest(r.method, e.url+r.path, body)
	if err != nil {
		e.t.Fatal(err)
	}
	if r.token != "" {
		hr.Header.Set("Authorization", "Bearer "+r.token)
	}
	if r.method == http.MethodPost || r.method == http.MethodPut {
		hr.Header.Set("X-XSRF-TOKEN", "t0k3n")
		if r.body != "" {
			hr.Header.Set("Content-Type", "application/json")
		}
	}
	for k, v := range r.header {
		if v == "" {
			hr.Header.Del(k)
			continue
		}
		hr.Header.Set(k, v)
	}
	res, err := noRedirects.Do(hr)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	out := resp{status: res.StatusCode, header: res.Header, body: string(b)}
	checkAgainstOpenAPI(e.t, hr, r.body, out)
	// The one answer that is not a problem: a refused back-channel logout
	// token is 400 {"error": "invalid_request"}, the shape Back-Channel
	// Logout 1.0 gives it (the OpenAPI document says so, checked above).
	oauthShape := res.StatusCode == http.StatusBadRequest && hr.URL.Path == auth.BackchannelLogoutPath
	// A HEAD answer has no body to check.
	if res.StatusCode >= 400 && !oauthShape && hr.Method != http.MethodHead {
		e.mu.Lock()
		e.bodies = append(e.bodies, out.body)
		e.mu.Unlock()
		e.checkProblem(out)
		checkErrorMessages(e.t, hr.URL.Path, out)
	}
	return out
}

// noRedirects is the tests' client: a redirect is an answer the test sees
// (its status and Location), as a script's client would.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// checkProblem asserts the RFC 9457 shape every error must have, with its
// code and the type that names the code's page, and records the code (and
// the rules of its errors items) as produced (codesSeen).
func (e *env) checkProblem(r resp) {
	e.t.Helper()
	if ct := r.header.Get("Content-Type"); ct != "application/problem+json" {
		e.t.Errorf("status %d: Content-Type %q, want application/problem+json", r.status, ct)
		return
	}
	var p struct {
		Type, Code, Title, Detail string
		Status                    int
		RequestID                 string `json:"request_id"`
		Errors                    []struct{ Parameter, Code, Detail string }
	}
	if err := json.Unmarshal([]byte(r.body), &p); err != nil {
		e.t.Errorf("status %d: body is not a problem: %s", r.status, r.body)
		return
	}
	if p.Status != r.status || p.Title != http.StatusText(r.status) || p.Detail == "" ||
		p.Code == "" || p.Type != "/problems/"+p.Code || p.RequestID != r.header.Get("X-Request-ID") {
		e.t.Errorf("malformed problem for %d: %s", r.status, r.body)
	}
	codesSeen.Store(p.Code, true)
	for _, it := range p.Errors {
		if it.Parameter == "" || it.Code == "" || it.Detail == "" || it.Detail == p.Detail {
			e.t.Errorf("malformed errors item in %s", r.body)
		}
		codesSeen.Store(p.Code+" "+it.Code, true)
	}
}

// codesSeen records every code (and "code rule" for errors items) some
// test of this run received; TestMain reports the table's codes none did.
var codesSeen sync.Map

// leakPatterns are things no response may contain.
var leakPatterns = regexp.MustCompile(`(?i)goroutine |panic|\.go:\d+|/home/|/root/|/work/|/usr/|redis|casbin|echo|resty|lua|dial tcp|127\.0\.0\.1|localhost|:\d{4,5}\b|unmarshal|invalid character|json: |strconv|runtime\.`)

// scanBodies fails the test if any error body leaked internals.
func (e *env) scanBodies() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, b := range e.bodies {
		if m := leakPatterns.FindString(b); m != "" {
			e.t.Errorf("error body leaks %q: %s", m, b)
		}
	}
}
