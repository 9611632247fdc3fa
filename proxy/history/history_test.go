package history_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/cache"
	"github.com/facade-dev/facade/internal/testkit/testredis"
	"github.com/facade-dev/facade/proxy/history"
	"github.com/facade-dev/facade/upstream"
	"github.com/facade-dev/facade/upstream/bambootest"
)

func TestMain(m *testing.M) { testredis.Main(m) }

// bench is a Bamboo test server, and what an instance of the facade
// reads it through: the upstream client and the shared cache on a real
// Redis.
type bench struct {
	srv   *bambootest.Server
	up    *upstream.Client
	cache *cache.Cache
	rdb   *redis.Client
	url   string
}

func newBench(tb testing.TB) *bench {
	tb.Helper()
	rdb := testredis.Start(tb, testredis.Options{}).Client(tb)
	srv, ts := bambootest.NewTestServer(tb)
	up, err := upstream.New(upstream.Config{BaseURL: ts.URL, Token: bambootest.DefaultToken, Timeout: 30 * time.Second})
	if err != nil {
		tb.Fatal(err)
	}
	return &bench{srv: srv, up: up, cache: cache.New(rdb, cache.Config{TTL: time.Hour}), rdb: rdb, url: ts.URL}
}

// instance is one facade instance: its own process memory, the shared
// cache (its TTL, the result list's, an hour: longer than any test, even
// under the race detector).
func (b *bench) instance() *history.History {
	return history.New(b.up, b.cache, history.Config{})
}

func planKey(tb testing.TB, s string) facade.PlanKey {
	k, err := facade.ParsePlanKey(s)
	if err != nil {
		tb.Fatal(err)
	}
	return k
}

type testsAnswer struct {
	Builds []history.BuildRef `json:"builds"`
	Tests  []history.TestRow  `json:"tests"`
}

func readTests(tb testing.TB, h *history.History, plan string, last int) testsAnswer {
	tb.Helper()
	b, err := h.Tests(context.Background(), planKey(tb, plan), last)
	if err != nil {
		tb.Fatal(err)
	}
	var a testsAnswer
	if err := json.Unmarshal(b, &a); err != nil {
		tb.Fatalf("%v: %s", err, b)
	}
	return a
}

// A developer's questions about a red build: which failures are new,
// which have been failing since when, which are flaky. Six builds of ten
// tests (newest first: 6 ... 1), and a seventh still running.
func TestFailingSinceFlakyAndTheOrder(t *testing.T) {
	b := newBench(t)
	failing := map[int][]int{ // build -> failed tests
		2: {2},
		4: {1, 4},
		5: {1, 3, 9},
		6: {1, 4, 9},
	}
	for n := 1; n <= 6; n++ {
		state, key := "Successful", "H-P-"+strconv.Itoa(n)
		if len(failing[n]) > 0 {
			state = "Failed"
		}
		b.srv.AddResult("H-P", n, state)
		tests := bambootest.Tests{Count: 10, Failed: failing[n]}
		if n <= 4 {
			tests.Count = 9 // test 9 did not exist yet
		}
		if n == 5 {
			tests.Skipped = []int{4}
		}
		b.srv.SetTests(key, tests)
	}
	b.srv.SetRevision("H-P-5", "abc123")
	b.srv.SetRevision("H-P-6", "abc123") // build 6 ran build 5's commit again
	b.srv.StartBuild("H-P")              // 7, running: not in the window

	a := readTests(t, b.instance(), "H-P", 30)
	var numbers []int
	for _, bl := range a.Builds {
		numbers = append(numbers, bl.Number)
	}
	if got := strings.Trim(strings.Join(strings.Fields(fmtInts(numbers)), ","), "[]"); got != "6,5,4,3,2,1" {
		t.Fatalf("builds %s, want the six finished ones newest first", got)
	}
	if a.Builds[0].VCSRevision != "abc123" || a.Builds[0].State != "Failed" || a.Builds[0].CompletedAt == "" {
		t.Errorf("newest build: %+v", a.Builds[0])
	}
	type want struct {
		method, outcomes string
		since            int // 0: null
		failures         int
		flaky            bool
	}
	wants := []want{
		{"case00001", "failed failed failed passed passed passed", 4, 3, false},
		{"case00004", "failed skipped failed passed passed passed", 4, 2, false},
		{"case00009", "failed failed absent absent absent absent", 5, 2, false},
		{"case00003", "passed failed passed passed passed passed", 0, 1, true},
		{"case00002", "passed passed passed passed failed passed", 0, 1, false},
	}
	if len(a.Tests) != len(wants) {
		t.Fatalf("%d tests, want %d: %+v", len(a.Tests), len(wants), a.Tests)
	}
	for i, w := range wants {
		got := a.Tests[i]
		since := 0
		if got.FailingSince != nil {
			since = *got.FailingSince
		}
		if got.Method != w.method || strings.Join(got.Outcomes, " ") != w.outcomes || since != w.since || got.Failures != w.failures || got.Flaky != w.flaky {
			t.Errorf("row %d: %s %v since %d failures %d flaky %v; want %+v", i, got.Method, got.Outcomes, since, got.Failures, got.Flaky, w)
		}
		if !strings.HasPrefix(got.Class, "com.example.p.Suite") || (got.LatestError == "") {
			t.Errorf("row %d: class %q, latest error %q", i, got.Class, got.LatestError)
		}
	}
	if e := a.Tests[3].FlakyEvidence; e == nil || e.VCSRevision != "abc123" || e.Passed != 6 || e.Failed != 5 {
		t.Errorf("flaky evidence: %+v", e)
	}
	if a.Tests[0].FlakyEvidence != nil || !strings.Contains(a.Tests[0].LatestError, "failed in build 6") {
		t.Errorf("a steady failure: %+v", a.Tests[0])
	}
	// ?last=2 sees builds 6 and 5 only.
	if a := readTests(t, b.instance(), "H-P", 2); len(a.Builds) != 2 || len(a.Tests) != 4 || len(a.Tests[0].Outcomes) != 2 {
		t.Errorf("last=2: %d builds, %d tests", len(a.Builds), len(a.Tests))
	}
}

func fmtInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, " ")
}

// addSuite gives plan builds 1..n, each of tests tests, a few failing.
func addSuite(srv *bambootest.Server, plan string, n, tests int) {
	for i := 1; i <= n; i++ {
		key := plan + "-" + strconv.Itoa(i)
		srv.AddResult(plan, i, "Failed")
		srv.SetTests(key, bambootest.Tests{Count: tests, Failed: []int{i % 7, 100 + i%3, tests - 1}, Skipped: []int{tests - 2}})
	}
}

// Cold, a history of 30 builds costs the result list and one call per
// plan result; warm, nothing upstream, on this instance or another one
// (the results' tests are kept in the shared cache).
func TestAColdHistoryAsksUpstreamOncePerResult(t *testing.T) {
	b := newBench(t)
	addSuite(b.srv, "BIG-P", 30, 5000)
	b.srv.ResetCalls()
	h := b.instance()
	a := readTests(t, h, "BIG-P", 30)
	if len(a.Builds) != 30 || len(a.Tests) == 0 {
		t.Fatalf("%d builds, %d tests", len(a.Builds), len(a.Tests))
	}
	calls := b.srv.CallCount("/rest/api/latest/")
	if calls > 31 {
		t.Errorf("cold: %d upstream calls, want at most 31 (the list and 30 results)", calls)
	}
	for _, c := range b.srv.Calls() {
		if strings.Contains(c.Path, "-BIG") || (strings.Contains(c.RawQuery, "testResults") && !strings.Contains(c.RawQuery, "stages.stage.results.result.testResults")) {
			t.Errorf("asked %s?%s", c.Path, c.RawQuery)
		}
	}
	b.srv.ResetCalls()
	readTests(t, h, "BIG-P", 30)
	readTests(t, h, "BIG-P", 10)
	readTests(t, b.instance(), "BIG-P", 30) // another instance
	if _, err := h.Trend(context.Background(), planKey(t, "BIG-P"), 50); err != nil {
		t.Fatal(err)
	}
	if n := b.srv.CallCount("/"); n != 0 {
		t.Errorf("warm: %d upstream calls, want 0: %v", n, b.srv.Calls())
	}
}

// The trend is each finished build's number, state, duration, completion
// time and test counts, newest first, from the result list alone.
func TestTrendIsTheResultListsCounts(t *testing.T) {
	b := newBench(t)
	addSuite(b.srv, "T-P", 3, 20)
	b.srv.AddResult("T-P", 4, "Successful")
	b.srv.ResetCalls()
	raw, err := b.instance().Trend(context.Background(), planKey(t, "T-P"), 50)
	if err != nil {
		t.Fatal(err)
	}
	var a struct{ Builds []history.TrendBuild }
	if err := json.Unmarshal(raw, &a); err != nil {
		t.Fatal(err)
	}
	if len(a.Builds) != 4 || a.Builds[0].Number != 4 || a.Builds[0].State != "Successful" || a.Builds[1].State != "Failed" {
		t.Fatalf("builds: %+v", a.Builds)
	}
	if c := a.Builds[1].Tests; c.Passed != 17 || c.Failed != 2 || c.Skipped != 1 || a.Builds[1].DurationMS <= 0 || a.Builds[1].CompletedAt == "" {
		t.Errorf("build 3: %+v", a.Builds[1])
	}
	if n := b.srv.CallCount("/"); n != 1 {
		t.Errorf("%d upstream calls, want the list alone", n)
	}
}

func TestLastIsOneToAHundred(t *testing.T) {
	for raw, want := range map[string]int{"1": 1, "30": 30, "100": 100} {
		if n, err := history.ParseLast(raw, true, 7); err != nil || n != want {
			t.Errorf("%q: %d, %v", raw, n, err)
		}
	}
	if n, err := history.ParseLast("", false, 7); err != nil || n != 7 {
		t.Errorf("absent: %d, %v", n, err)
	}
	for _, raw := range []string{"", "0", "101", "-1", "+5", "abc", "1e2", "0100", " 5"} {
		if _, err := history.ParseLast(raw, true, 7); err == nil {
			t.Errorf("%q taken", raw)
		}
	}
}

// BenchmarkHistory: /tests of 30 builds of 5,000 tests, cold (an empty
// shared cache, a new instance: the list and 30 results read upstream)
// and warm (docs/performance.md, "Builds over time").
func BenchmarkHistory(b *testing.B) {
	bb := newBench(b)
	addSuite(bb.srv, "BIG-P", 30, 5000)
	plan := planKey(b, "BIG-P")
	b.Run("cold", func(b *testing.B) {
		calls := 0
		for range b.N {
			b.StopTimer()
			if err := bb.rdb.FlushDB(context.Background()).Err(); err != nil {
				b.Fatal(err)
			}
			h := bb.instance()
			bb.srv.ResetCalls()
			b.StartTimer()
			if _, err := h.Tests(context.Background(), plan, 30); err != nil {
				b.Fatal(err)
			}
			calls = max(calls, bb.srv.CallCount("/"))
		}
		b.ReportMetric(float64(calls), "upstream-calls/op")
	})
	b.Run("bamboo-alone", func(b *testing.B) {
		// The floor of cold: the same 31 documents asked of the test
		// Bamboo (in this process, on the same cores) by a plain client,
		// read and dropped.
		for range b.N {
			get := func(path string) {
				req, _ := http.NewRequest(http.MethodGet, bb.url+path, nil)
				req.Header.Set("Authorization", "Bearer "+bambootest.DefaultToken)
				req.Header.Set("Accept", "application/json")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			get("/rest/api/latest/result/BIG-P.json?expand=results.result&max-results=100")
			for n := 1; n <= 30; n++ {
				get("/rest/api/latest/result/BIG-P-" + strconv.Itoa(n) + ".json?expand=stages.stage.results.result.testResults.allTests.testResult.errors")
			}
		}
	})
	b.Run("warm", func(b *testing.B) {
		h := bb.instance()
		if _, err := h.Tests(context.Background(), plan, 30); err != nil {
			b.Fatal(err)
		}
		bb.srv.ResetCalls()
		b.ResetTimer()
		for range b.N {
			if _, err := h.Tests(context.Background(), plan, 30); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(bb.srv.CallCount("/")), "upstream-calls")
	})
	b.Run("warm-other-instance", func(b *testing.B) {
		// Another instance's first read: the results' tests come from the
		// shared cache, the answer is computed here.
		for range b.N {
			if _, err := bb.instance().Tests(context.Background(), plan, 30); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// The demo's history, which the page shows: WEB-NIGHTLY's latest build
// broke ApiTest.servesBuild again (it failed in 2 as well), and PROJ-CORE
// passed on the commit that failed before (flaky).
func TestTheDemosHistory(t *testing.T) {
	b := newBench(t)
	bambootest.DemoData(b.srv)
	a := readTests(t, b.instance(), "WEB-NIGHTLY", 30)
	first := a.Tests[0]
	if first.Method != "servesBuild" || strings.Join(first.Outcomes, " ") != "failed passed passed failed passed" || first.FailingSince == nil || *first.FailingSince != 5 || first.Flaky {
		t.Errorf("WEB-NIGHTLY: %+v", first)
	}
	a = readTests(t, b.instance(), "PROJ-CORE", 30)
	if len(a.Tests) != 1 || !a.Tests[0].Flaky || a.Tests[0].FlakyEvidence.Passed != 4 || a.Tests[0].FlakyEvidence.Failed != 3 || a.Tests[0].FailingSince != nil {
		t.Errorf("PROJ-CORE: %+v", a.Tests)
	}
}
