package proxy

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/authz"
	"github.com/facade-dev/facade/cache"
	"github.com/facade-dev/facade/favourites"
	"github.com/facade-dev/facade/internal/testkit/testclock"
	"github.com/facade-dev/facade/internal/testkit/testlog"
	"github.com/facade-dev/facade/internal/testkit/testredis"
	"github.com/facade-dev/facade/server/problem"
	"github.com/facade-dev/facade/upstream"
	"github.com/facade-dev/facade/upstream/bambootest"
)

func TestMain(m *testing.M) { testredis.Main(m) }

// testModel is the shipped model.conf without its comments.
const testModel = `[request_definition]
r = sub, obj, act

[policy_definition]
p = sub, obj, act

[role_definition]
g = _, _

[policy_effect]
e = some(where (p.eft == allow))

[matchers]
m = !regexMatch(r.sub, ":") && g(r.sub, p.sub) && (g(r.obj, p.obj) || keyMatch(r.obj, p.obj)) && r.act == p.act
`

// testPolicy gives each kind of principal of the filtering table:
//
//	erin   project grant (INFRA: all its plans)
//	dave   one plan grant only (MOBILE-IOS)
//	frank  a team (group) grant (team:platform holds PROJ)
//	carol  the team plus a plan of another project (WEB-NIGHTLY)
//	ivy    three projects' worth, for paging
//	nobody nothing at all
const testPolicy = `p, team:platform, project:PROJ, view
p, carol, plan:WEB-NIGHTLY, view
g, carol, team:platform
g, frank, team:platform
p, erin, project:INFRA, view
p, dave, plan:MOBILE-IOS, view
p, ivy, project:PROJ, view
p, ivy, project:WEB, view
p, ivy, plan:MOBILE-ANDROID, view
p, ivy, project:INFRA, view
`

// callerToken is what test callers send as their own Authorization; it
// must never reach the upstream.
const callerToken = "Bearer caller-own-token-never-forwarded"

type options struct {
	cacheTTL, stale time.Duration
	upstream        upstream.Config
	policy          string
	publicURL       string
	viewEntries     int
	viewBytes       int64
	redis           *redis.Client // nil: a fresh DB of the shared test server
	// upstreamHandler, when set, is the upstream instead of the test
	// Bamboo (fixture.bamboo is then nil).
	upstreamHandler http.Handler
	// fill, when set, fills the test Bamboo instead of DemoData;
	// bambooOptions configure it.
	fill          func(*bambootest.Server)
	bambooOptions []bambootest.Option
	// clock, when set, is the cache's and the handler's clock (a second
	// instance shares the first one's).
	clock *testclock.Clock
	// fetchTimeout bounds a cache fill (0: the cache's default).
	fetchTimeout time.Duration
}

type fixture struct {
	t          testing.TB
	bamboo     *bambootest.Server
	upstreamTS *httptest.Server
	h          *Handler
	e          *testRouter
	az         *authz.Authorizer
	policyPath string
	cache      *cache.Cache
	logs       *testlog.Buffer
	// clock is the cache's and the handler's: tests move it past a TTL.
	clock *testclock.Clock
	rdb   *redis.Client
}

func newFixture(t testing.TB, o options) *fixture {
	t.Helper()
	var (
		bamboo *bambootest.Server
		ts     *httptest.Server
	)
	if o.upstreamHandler != nil {
		ts = httptest.NewServer(o.upstreamHandler)
		t.Cleanup(ts.Close)
	} else {
		bamboo, ts = bambootest.NewTestServer(t, o.bambooOptions...)
		if o.fill == nil {
			o.fill = bambootest.DemoData
		}
		o.fill(bamboo)
	}

	dir := t.TempDir()
	modelPath, policyPath := filepath.Join(dir, "model.conf"), filepath.Join(dir, "policy.csv")
	if o.policy == "" {
		o.policy = testPolicy
	}
	writeFile(t, modelPath, testModel)
	writeFile(t, policyPath, o.policy)
	logs := &testlog.Buffer{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	az, err := authz.New(modelPath, policyPath, authz.Config{Log: log})
	if err != nil {
		t.Fatal(err)
	}
	uc := o.upstream
	uc.BaseURL = ts.URL
	if uc.Token == "" {
		uc.Token = bambootest.DefaultToken
	}
	if uc.Retries == 0 {
		uc.Retries = -1
	}
	uc.Log = log
	up, err := upstream.New(uc)
	if err != nil {
		t.Fatal(err)
	}
	rdb := o.redis
	if rdb == nil {
		rdb = testredis.Client(t)
	}
	clock := o.clock
	if clock == nil {
		clock = testclock.New()
	}
	c := cache.New(rdb, cache.Config{TTL: o.cacheTTL, Stale: o.stale, FetchTimeout: o.fetchTimeout, Now: clock.Now, Log: log})
	h := New(up, c, az, Config{PublicURL: o.publicURL, ViewCacheEntries: o.viewEntries, ViewCacheBytes: o.viewBytes, CacheTTL: o.cacheTTL, Now: clock.Now,
		Favourites: favourites.New(rdb, favourites.Config{}), Log: log})
	f := &fixture{t: t, bamboo: bamboo, upstreamTS: ts, h: h, az: az, policyPath: policyPath, cache: c, logs: logs, clock: clock, rdb: rdb}
	f.e = newTestServer(h)
	if bamboo != nil {
		bamboo.ResetCalls()
	}
	return f
}

func writeFile(t testing.TB, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// newTestServer mounts every endpoint of the route table, as the server
// mounts them on its router, with a stand-in for authentication (the
// principal comes from X-Test-Sub and X-Test-Role) and the server's own
// problem rendering for errors.
func newTestServer(h *Handler) *testRouter {
	r := &testRouter{}
	eps := Endpoints()
	for i := range eps {
		ep := &eps[i]
		segs := strings.Split(ep.Pattern, "/")
		r.routes = append(r.routes, testRoute{segs, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			serveTestEndpoint(h, ep, segs, w, r)
		})})
	}
	return r
}

// serveTestEndpoint answers r as server/builds.go does: the path's
// parameters, as the router matched them, passed in; the answer, the 204
// of a favourite or the download written; an error as a problem.
func serveTestEndpoint(h *Handler, ep *Endpoint, pattern []string, w http.ResponseWriter, r *http.Request) {
	req := &Request{
		Principal: facade.Principal{ID: r.Header.Get("X-Test-Sub"), Role: r.Header.Get("X-Test-Role")},
		Path:      r.URL.EscapedPath(), RawQuery: r.URL.RawQuery, Host: r.Host, TLS: r.TLS != nil,
		Range: r.Header.Get("Range"), IfRange: r.Header.Get("If-Range"),
	}
	path := strings.Split(r.URL.EscapedPath(), "/")
	for i, p := range pattern {
		switch p {
		case ":key":
			req.Key = path[i]
		case ":number":
			req.Number = path[i]
		}
	}
	ctx := r.Context()
	var err error
	switch {
	case ep.File:
		var d *Download
		d, err = h.Download(ctx, ep, req)
		if d != nil {
			defer d.Close()
			d.SetHeaders(w.Header())
		}
		if err == nil {
			w.WriteHeader(d.Status())
			err = d.Send(w)
		}
	case ep.Write:
		if err = h.Favourite(ctx, ep, req, r.Method != http.MethodDelete); err == nil {
			w.WriteHeader(http.StatusNoContent)
		}
	default:
		var a Answer
		if a, err = h.Read(ctx, ep, req); err == nil {
			w.Header()["X-Cache"] = []string{string(a.Cache)}
			w.Header()["Etag"] = a.ETag
			w.Header()["Content-Length"] = a.Length
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write(a.Body)
		}
	}
	if err != nil {
		writeProblem(w, r, err)
	}
}

// testRouter routes GET and HEAD as the server's router (Echo) does: on the
// escaped path, segment by segment, a literal segment before a parameter,
// and without cleaning the path first (net/http's ServeMux would redirect
// "/a/../b" and "//"; the handlers must refuse those themselves).
type testRouter struct {
	routes []testRoute
}

type testRoute struct {
	segs []string
	h    http.Handler
}

func (t *testRouter) handle(pattern string, h http.Handler) {
	t.routes = append(t.routes, testRoute{strings.Split(pattern, "/"), h})
}

func (t *testRouter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead && r.Method != http.MethodPost && r.Method != http.MethodDelete {
		http.Error(w, "method", http.StatusMethodNotAllowed)
		return
	}
	path := strings.Split(r.URL.EscapedPath(), "/")
	best, bestLiterals := -1, -1
	for i, rt := range t.routes {
		if n, ok := matchPattern(rt.segs, path); ok && n > bestLiterals {
			best, bestLiterals = i, n
		}
	}
	if best < 0 {
		http.NotFound(w, r)
		return
	}
	t.routes[best].h.ServeHTTP(w, r)
}

// writeProblem answers with the server's problem body for err
// (server/problem renders it; the server's own writer adds logging).
func writeProblem(w http.ResponseWriter, _ *http.Request, err error) {
	status, body := problem.Render(w.Header(), err, "")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// get performs a GET as principal sub (empty: anonymous) and returns the
// recorded response.
func (f *fixture) get(sub, target string) *httptest.ResponseRecorder {
	f.t.Helper()
	return f.do(http.MethodGet, sub, target)
}

// do performs a request of method as principal sub.
func (f *fixture) do(method, sub, target string) *httptest.ResponseRecorder {
	f.t.Helper()
	req := httptest.NewRequest(method, target, nil)
	req.Header.Set("Authorization", callerToken)
	req.Header.Set("X-Test-Sub", sub)
	req.Header.Set("X-Test-Role", "developer")
	rec := httptest.NewRecorder()
	f.e.ServeHTTP(rec, req)
	return rec
}

// getOK is get that fails the test unless the status is 200, and decodes
// the body.
func (f *fixture) getOK(sub, target string) (map[string]any, *httptest.ResponseRecorder) {
	f.t.Helper()
	rec := f.get(sub, target)
	if rec.Code != http.StatusOK {
		f.t.Fatalf("GET %s as %q: status %d, body %s", target, sub, rec.Code, rec.Body)
	}
	var doc map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		f.t.Fatalf("GET %s: body is not JSON: %v", target, err)
	}
	f.assertNoUpstreamHost(rec.Body.String())
	return doc, rec
}

// assertNoUpstreamHost fails when body names the upstream server.
func (f *fixture) assertNoUpstreamHost(body string) {
	f.t.Helper()
	host := strings.TrimPrefix(f.upstreamTS.URL, "http://")
	if strings.Contains(body, host) {
		f.t.Fatalf("response names the upstream %s: %s", host, body)
	}
}

func (f *fixture) calls(prefix string) int { return f.bamboo.CallCount(prefix) }

// problemDetail decodes a problem response's detail.
func problemDetail(t testing.TB, rec *httptest.ResponseRecorder) string {
	t.Helper()
	var p struct{ Detail string }
	if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
		t.Fatalf("error body is not a problem: %s", rec.Body)
	}
	return p.Detail
}

// path walks a decoded document: path(doc, "projects", "project").
func path(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func num(v any) int {
	f, _ := v.(float64)
	return int(f)
}

func list(v any) []any {
	l, _ := v.([]any)
	return l
}

// route is the table's entry named name.
func route(name string) *Route {
	for i := range Routes {
		if Routes[i].Name == name {
			return &Routes[i]
		}
	}
	panic("no route " + name)
}
