package upstream_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	facade "github.com/facade-dev/facade"
	"github.com/facade-dev/facade/internal/testkit/testclock"
	"github.com/facade-dev/facade/metrics"
	"github.com/facade-dev/facade/upstream"
	"github.com/facade-dev/facade/upstream/bambootest"
)

const serviceToken = "svc-token-for-tests"

// newPair starts a demo Bamboo and a client for it. cfg's BaseURL and Token
// are filled in when empty.
func newPair(t *testing.T, cfg upstream.Config) (*bambootest.Server, *upstream.Client) {
	t.Helper()
	bamboo, ts := bambootest.NewTestServer(t, bambootest.WithToken(serviceToken))
	bambootest.DemoData(bamboo)
	if cfg.BaseURL == "" {
		cfg.BaseURL = ts.URL
	}
	if cfg.Token == "" {
		cfg.Token = serviceToken
	}
	cfg.Log = testLogger(t)
	client, err := upstream.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return bamboo, client
}

// testLogger shows the client's log lines with the test's output (only on failure or -v).
func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// wantError checks err is a *facade.Error of want's code. Its cause may
// name upstream details: the HTTP layer prints only the code's sentence.
func wantError(t *testing.T, err error, want *facade.Error) *facade.Error {
	t.Helper()
	var fe *facade.Error
	if !errors.As(err, &fe) {
		t.Fatalf("error %v (%T) is not a *facade.Error", err, err)
	}
	if !errors.Is(err, want) {
		t.Fatalf("got code %q, want %q", fe.Code, want.Code)
	}
	return fe
}

func TestProjectsReturnsBambooDocumentWithServiceToken(t *testing.T) {
	bamboo, client := newPair(t, upstream.Config{})
	ctx := context.Background()

	doc, err := client.Projects(ctx, upstream.ProjectQuery{Expand: []string{upstream.ExpandProjectPlans}, MaxResults: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var page projectsPage
	if err := json.Unmarshal(doc.Body, &page); err != nil {
		t.Fatal(err)
	}
	if page.Projects.Size != 4 || len(page.Projects.Project) != 4 {
		t.Fatalf("want 4 projects, got size %d, %d listed", page.Projects.Size, len(page.Projects.Project))
	}
	web := page.Projects.Project[1]
	if web.Key != "WEB" || len(web.Plans.Plan) != 2 || web.Plans.Plan[0].Key != "WEB-NIGHTLY" {
		t.Fatalf("WEB project not expanded as expected: %+v", web)
	}

	calls := bamboo.Calls()
	if len(calls) != 1 {
		t.Fatalf("want 1 upstream call, got %d", len(calls))
	}
	call := calls[0]
	if call.Path != "/rest/api/latest/project.json" ||
		call.RawQuery != "expand=projects.project.plans&max-results=1000" {
		t.Fatalf("unexpected upstream request %s?%s", call.Path, call.RawQuery)
	}
	if got := call.Header.Get("Authorization"); got != "Bearer "+serviceToken {
		t.Fatalf("Authorization sent upstream = %q", got)
	}
	if got := call.Header.Get("Accept"); got != "application/json" {
		t.Fatalf("Accept sent upstream = %q", got)
	}
}

func TestProjectsWithoutExpandHasCollapsedPlans(t *testing.T) {
	bamboo, client := newPair(t, upstream.Config{})
	doc, err := client.Projects(context.Background(), upstream.ProjectQuery{Expand: []string{"projects.project.plans.plan.stages", "bogus"}})
	if err != nil {
		t.Fatal(err)
	}
	var page projectsPage
	if err := json.Unmarshal(doc.Body, &page); err != nil {
		t.Fatal(err)
	}
	proj := page.Projects.Project[0]
	if proj.Plans.Plan != nil || proj.Plans.Size != 3 {
		t.Fatalf("plans should be collapsed with size 3: %+v", proj.Plans)
	}
	if q := bamboo.Calls()[0].RawQuery; q != "" {
		t.Fatalf("unsupported expand values reached upstream: %q", q)
	}
}

func TestDocumentSendsOnlyTheBuiltQuery(t *testing.T) {
	bamboo, client := newPair(t, upstream.Config{})
	q := url.Values{"expand": {"results.result.artifacts"}, "max-results": {"100"}, "start-index": {"1"}}
	doc, err := client.Document(context.Background(), "results", resultOf(t, "PROJ-CORE"), q)
	if err != nil {
		t.Fatal(err)
	}
	var page resultsPage
	if err := json.Unmarshal(doc.Body, &page); err != nil {
		t.Fatal(err)
	}
	if page.Results.StartIndex != 1 || len(page.Results.Result) != 5 || page.Results.Result[0].BuildNumber != 5 {
		t.Fatalf("unexpected page: start %d, %d results", page.Results.StartIndex, len(page.Results.Result))
	}
	if len(page.Results.Result[0].Artifacts.Artifact) == 0 {
		t.Fatal("artifacts were not expanded")
	}
	call := bamboo.Calls()[0]
	if call.EscapedPath != "/rest/api/latest/result/PROJ-CORE.json" {
		t.Fatalf("path %q", call.EscapedPath)
	}
	if call.RawQuery != "expand=results.result.artifacts&max-results=100&start-index=1" {
		t.Fatalf("query %q", call.RawQuery)
	}
}

func TestDocumentRefusesMalformedSegmentsWithoutCalling(t *testing.T) {
	bamboo, client := newPair(t, upstream.Config{})
	// A key is a facade.BuildKey: none of these texts makes one, so none
	// can reach a Path.
	for _, key := range []string{
		"../admin", "CORE/../../x", "CORE?os_authType=basic", "CORE#frag", "PROJ%2F", "", "CORE.json",
		"A B", strings.Repeat("A", 129),
	} {
		if _, err := facade.ParseBuildKey(key); err == nil {
			t.Errorf("%q parsed as a build key", key)
		}
	}
	for _, at := range []upstream.Path{
		{}, {Resource: "../admin"}, {Resource: "result/../admin"}, {Resource: "result?os_authType=basic"},
		{Resource: "result", Part: "label#frag"}, {Resource: "result", Part: "x%2F"}, {Resource: "result.json"},
		{Resource: "result", Key: mustKey(t, "PROJ-CORE-6"), Part: "a b"}, {Resource: strings.Repeat("a", 129)},
	} {
		_, err := client.Document(context.Background(), "results", at, nil)
		wantError(t, err, facade.ErrBadIdentifier)
	}
	if n := len(bamboo.Calls()); n != 0 {
		t.Fatalf("malformed paths produced %d upstream calls", n)
	}
}

// mustKey is a well-formed build key.
func mustKey(t *testing.T, s string) facade.BuildKey {
	t.Helper()
	k, err := facade.ParseBuildKey(s)
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return k
}

// resultOf is the path of /result/{key}.
func resultOf(t *testing.T, key string) upstream.Path {
	return upstream.Path{Resource: "result", Key: mustKey(t, key)}
}

func TestUnknownPlanIsNotFoundAndDoesNotTripBreaker(t *testing.T) {
	bamboo, client := newPair(t, upstream.Config{BreakerFailures: 2})
	for range 4 {
		_, err := client.Document(context.Background(), "results", resultOf(t, "WEB-GONE"), nil)
		wantError(t, err, facade.ErrNotFound)
	}
	if s := client.BreakerState(); s != upstream.BreakerClosed {
		t.Fatalf("404s moved the breaker to %v", s)
	}
	if n := bamboo.CallCount("/rest/api/latest/result/"); n != 4 {
		t.Fatalf("404 must not be retried: %d calls", n)
	}
}

func TestWrongTokenIsBadGatewayWithoutRetry(t *testing.T) {
	bamboo, client := newPair(t, upstream.Config{Token: "not-the-token"})
	_, err := client.Projects(context.Background(), upstream.ProjectQuery{})
	fe := wantError(t, err, facade.ErrUpstreamBad)
	if !strings.Contains(fe.Err.Error(), "401") {
		t.Fatalf("the log cause should name the status: %v", fe.Err)
	}
	if n := len(bamboo.Calls()); n != 1 {
		t.Fatalf("a 401 was retried: %d calls", n)
	}
}

func TestServerErrorsAreRetriedThenBadGateway(t *testing.T) {
	bamboo, client := newPair(t, upstream.Config{Retries: 2})
	bamboo.SetFailing(http.StatusInternalServerError)
	_, err := client.Projects(context.Background(), upstream.ProjectQuery{})
	wantError(t, err, facade.ErrUpstreamBad)
	if n := len(bamboo.Calls()); n != 3 {
		t.Fatalf("want 1 try + 2 retries, got %d calls", n)
	}
}

func TestTransientServerErrorsAreRetriedToSuccess(t *testing.T) {
	bamboo, client := newPair(t, upstream.Config{Retries: 2})
	bamboo.FailNext(2, http.StatusServiceUnavailable)
	if _, err := client.Document(context.Background(), "results", resultOf(t, "PROJ-LIB"), nil); err != nil {
		t.Fatalf("two 503s then success should succeed: %v", err)
	}
	if n := len(bamboo.Calls()); n != 3 {
		t.Fatalf("want 3 calls, got %d", n)
	}
}

func TestGarbageBodyIsBadGateway(t *testing.T) {
	bamboo, client := newPair(t, upstream.Config{})
	bamboo.SetGarbage(true)
	_, err := client.Projects(context.Background(), upstream.ProjectQuery{})
	wantError(t, err, facade.ErrUpstreamBad)
	if n := len(bamboo.Calls()); n != 1 {
		t.Fatalf("garbage was retried: %d calls", n)
	}
}

func TestJSONThatIsNotAnObjectIsBadGateway(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`["a JSON array, not a Bamboo document"]`))
	}))
	t.Cleanup(ts.Close)
	client, err := upstream.New(upstream.Config{BaseURL: ts.URL, Log: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = client.Projects(context.Background(), upstream.ProjectQuery{})
	wantError(t, err, facade.ErrUpstreamBad)
}

func TestHangingUpstreamTimesOutWithinBudget(t *testing.T) {
	const budget = 300 * time.Millisecond
	m := metrics.New()
	bamboo, client := newPair(t, upstream.Config{Timeout: budget, Metrics: m})
	bamboo.SetHang(true)
	timeoutsBefore := metricValue(m.UpstreamCalls.WithLabelValues("projects", "timeout"))

	start := time.Now()
	_, err := client.Projects(context.Background(), upstream.ProjectQuery{})
	elapsed := time.Since(start)

	wantError(t, err, facade.ErrUpstreamTimeout)
	// Not before the budget; and the configured budget, not the default
	// one: the bound is the default (10 s) so that a loaded machine's
	// delays cannot fail this, while a client ignoring Timeout still does.
	if elapsed < budget || elapsed >= upstream.DefaultTimeout {
		t.Fatalf("timed out after %v with a budget of %v", elapsed, budget)
	}
	if n := len(bamboo.Calls()); n != 1 {
		t.Fatalf("%d calls upstream; a timed-out call is not retried past the budget", n)
	}
	if got := metricValue(m.UpstreamCalls.WithLabelValues("projects", "timeout")); got != timeoutsBefore+1 {
		t.Fatalf("timeout metric went from %v to %v", timeoutsBefore, got)
	}
}

func TestCallerCancellationDoesNotTripBreaker(t *testing.T) {
	bamboo, client := newPair(t, upstream.Config{BreakerFailures: 1})
	bamboo.SetHang(true)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for len(bamboo.Calls()) == 0 {
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
	}()
	_, err := client.Projects(ctx, upstream.ProjectQuery{})
	wantError(t, err, facade.ErrUpstreamTimeout)
	if s := client.BreakerState(); s != upstream.BreakerClosed {
		t.Fatalf("a caller giving up opened the breaker: %v", s)
	}
}

func TestBreakerOpensAfterFailuresAndRecloses(t *testing.T) {
	const openFor = 30 * time.Second
	m := metrics.New()
	clock := testclock.New()
	bamboo, client := newPair(t, upstream.Config{Retries: -1, BreakerFailures: 3, BreakerOpenFor: openFor, Metrics: m, Now: clock.Now})
	bamboo.SetFailing(http.StatusBadGateway)
	for range 3 {
		_, err := client.Projects(context.Background(), upstream.ProjectQuery{})
		wantError(t, err, facade.ErrUpstreamBad)
	}
	if s := client.BreakerState(); s != upstream.BreakerOpen {
		t.Fatalf("breaker %v after 3 failures, want open", s)
	}
	if g := metricValue(m.BreakerState); g != 2 {
		t.Fatalf("breaker gauge %v, want 2", g)
	}

	clock.Advance(openFor - 1500*time.Millisecond)
	_, err := client.Projects(context.Background(), upstream.ProjectQuery{})
	fe := wantError(t, err, facade.ErrUpstreamOpen)
	if fe.RetryAfter != 2*time.Second {
		t.Fatalf("RetryAfter %v with 1.5 s of the open period left, want 2s (rounded up)", fe.RetryAfter)
	}
	if n := len(bamboo.Calls()); n != 3 {
		t.Fatalf("an open breaker let a call through: %d calls", n)
	}

	bamboo.SetFailing(0)
	clock.Advance(time.Second)
	if s := client.BreakerState(); s != upstream.BreakerOpen {
		t.Fatalf("breaker %v with half a second of the open period left, want open", s)
	}
	clock.Advance(500 * time.Millisecond)
	if s := client.BreakerState(); s != upstream.BreakerHalfOpen || s.String() != "half-open" {
		t.Fatalf("breaker %v once the open period is over, want half-open", s)
	}
	if _, err := client.Projects(context.Background(), upstream.ProjectQuery{}); err != nil {
		t.Fatalf("probe call failed: %v", err)
	}
	if s := client.BreakerState(); s != upstream.BreakerClosed {
		t.Fatalf("breaker %v after a good probe, want closed", s)
	}
	if g := metricValue(m.BreakerState); g != 0 {
		t.Fatalf("breaker gauge %v, want 0", g)
	}
}

func TestBreakerRetryAfterCountsDownOpenPeriod(t *testing.T) {
	clock := testclock.New()
	bamboo, client := newPair(t, upstream.Config{Retries: -1, BreakerFailures: 1, BreakerOpenFor: 20 * time.Second, Now: clock.Now})
	bamboo.SetHang(true)
	shortCtx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := client.Document(shortCtx, "results", resultOf(t, "PROJ-CORE"), nil)
	wantError(t, err, facade.ErrUpstreamTimeout) // a timeout counts as a failure

	for _, step := range []struct{ advance, want time.Duration }{{0, 20 * time.Second}, {7 * time.Second, 13 * time.Second}, {12 * time.Second, time.Second}} {
		clock.Advance(step.advance)
		_, err = client.Artifact(context.Background(), "/browse/PROJ-CORE-1/artifact/JOB1/test-report.xml/")
		if fe := wantError(t, err, facade.ErrUpstreamOpen); fe.RetryAfter != step.want {
			t.Fatalf("RetryAfter %v, want %v", fe.RetryAfter, step.want)
		}
	}
}

func TestHalfOpenLetsOneProbeThroughAndItsFailureReopens(t *testing.T) {
	const openFor = 30 * time.Second
	clock := testclock.New()
	bamboo, client := newPair(t, upstream.Config{Retries: -1, BreakerFailures: 1, BreakerOpenFor: openFor, Now: clock.Now})
	bamboo.SetFailing(http.StatusInternalServerError)
	_, _ = client.Projects(context.Background(), upstream.ProjectQuery{})
	clock.Advance(openFor)

	// The probe hangs: while it is out, no other call goes through.
	bamboo.SetHang(true)
	probe := make(chan error, 1)
	go func() {
		_, err := client.Projects(context.Background(), upstream.ProjectQuery{})
		probe <- err
	}()
	for len(bamboo.Calls()) < 2 {
		runtime.Gosched()
	}
	_, err := client.Projects(context.Background(), upstream.ProjectQuery{})
	if fe := wantError(t, err, facade.ErrUpstreamOpen); fe.RetryAfter != time.Second {
		t.Fatalf("a second call while the probe is out: RetryAfter %v, want 1s", fe.RetryAfter)
	}
	bamboo.SetHang(false)
	wantError(t, <-probe, facade.ErrUpstreamBad)
	if s := client.BreakerState(); s != upstream.BreakerOpen {
		t.Fatalf("failed probe left the breaker %v", s)
	}
	if n := len(bamboo.Calls()); n != 2 {
		t.Fatalf("%d upstream calls, want the first failure and the one probe", n)
	}
}

func TestRedirects(t *testing.T) {
	bamboo := bambootest.New(bambootest.WithToken(serviceToken))
	bambootest.DemoData(bamboo)
	mux := http.NewServeMux()
	// Same server under a context path that moved: followed.
	mux.Handle("/moved/", http.RedirectHandler("/bamboo/rest/api/latest/project.json", http.StatusMovedPermanently))
	mux.Handle("/bamboo/", http.StripPrefix("/bamboo", bamboo))
	// Another host: refused, the token must not travel there.
	mux.Handle("/away/", http.RedirectHandler("http://elsewhere.invalid/rest/api/latest/project.json", http.StatusFound))
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)

	moved, err := upstream.New(upstream.Config{BaseURL: ts.URL + "/moved", Token: serviceToken, Log: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := moved.Projects(context.Background(), upstream.ProjectQuery{}); err != nil {
		t.Fatalf("same-host redirect: %v", err)
	}

	away, err := upstream.New(upstream.Config{BaseURL: ts.URL + "/away", Token: serviceToken, Log: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = away.Projects(context.Background(), upstream.ProjectQuery{})
	wantError(t, err, facade.ErrUpstreamBad)
}

func TestUnreachableUpstreamIsBadGateway(t *testing.T) {
	ts := httptest.NewServer(http.NotFoundHandler())
	base := ts.URL
	ts.Close() // nothing listens there any more
	client, err := upstream.New(upstream.Config{BaseURL: base, Retries: 1, Log: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = client.Projects(context.Background(), upstream.ProjectQuery{})
	wantError(t, err, facade.ErrUpstreamBad)
}

func TestNewRefusesBadConfig(t *testing.T) {
	for _, base := range []string{"", "bamboo.example.com", "ftp://bamboo", "http://", "https://u:p@bamboo", "https://bamboo/?x=1", "https://bamboo/#f"} {
		if _, err := upstream.New(upstream.Config{BaseURL: base}); err == nil {
			t.Errorf("BaseURL %q accepted", base)
		}
	}
	if _, err := upstream.New(upstream.Config{BaseURL: "https://bamboo.example.com/bamboo/"}); err != nil {
		t.Errorf("context path refused: %v", err)
	}
}

func TestMetricsCountCallsByResult(t *testing.T) {
	m := metrics.New()
	bamboo, client := newPair(t, upstream.Config{Retries: -1, BreakerFailures: 100, Metrics: m})
	counter := func(op, result string) float64 {
		return metricValue(m.UpstreamCalls.WithLabelValues(op, result))
	}
	okBefore, nfBefore, errBefore := counter("results", "ok"), counter("results", "not_found"), counter("results", "error")
	_, _ = client.Document(context.Background(), "results", resultOf(t, "PROJ-CORE"), nil)
	_, _ = client.Document(context.Background(), "results", resultOf(t, "PROJ-NONE"), nil)
	bamboo.FailNext(1, http.StatusInternalServerError)
	_, _ = client.Document(context.Background(), "results", resultOf(t, "PROJ-CORE"), nil)
	if counter("results", "ok") != okBefore+1 || counter("results", "not_found") != nfBefore+1 || counter("results", "error") != errBefore+1 {
		t.Fatal("upstream call counters did not record ok, not_found and error once each")
	}
}

// metricValue reads a counter or gauge (testutil would need a module this
// repository does not require).
func metricValue(c prometheus.Metric) float64 {
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		panic(err)
	}
	if m.Counter != nil {
		return m.Counter.GetValue()
	}
	return m.Gauge.GetValue()
}

// The few wire fields these tests look at, as Bamboo names them.
type projectsPage struct {
	Projects struct {
		Size    int `json:"size"`
		Project []struct {
			Key   string `json:"key"`
			Plans struct {
				Size int `json:"size"`
				Plan []struct {
					Key string `json:"key"`
				} `json:"plan"`
			} `json:"plans"`
		} `json:"project"`
	} `json:"projects"`
}

type resultsPage struct {
	Results struct {
		StartIndex int `json:"start-index"`
		Result     []struct {
			BuildNumber int `json:"buildNumber"`
			Artifacts   struct {
				Artifact []json.RawMessage `json:"artifact"`
			} `json:"artifacts"`
		} `json:"result"`
	} `json:"results"`
}

// TestPlainHTTPWarning: the service token over plain http is worth a
// warning, except on loopback (a sidecar, the demo).
func TestPlainHTTPWarning(t *testing.T) {
	for base, warn := range map[string]bool{
		"http://bamboo.example.com": true, "https://bamboo.example.com": false,
		"http://127.0.0.1:8085": false, "http://localhost:8085/bamboo": false,
	} {
		var logs strings.Builder
		if _, err := upstream.New(upstream.Config{BaseURL: base, Token: "t", Log: slog.New(slog.NewTextHandler(&logs, nil))}); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(logs.String(), "plain http"); got != warn {
			t.Errorf("%s: warned %v, want %v", base, got, warn)
		}
	}
}
