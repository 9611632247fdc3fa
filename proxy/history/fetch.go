package history

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/cache"
	"github.com/facade-dev/facade/upstream"
)

// What is read upstream: the plan's result list (finished results only,
// as Bamboo lists them by default, each expanded to its counts, revision
// and times), and per plan result its tests below its jobs, reduced to a
// summary before it is cached.

// build is one finished result of the window, from the result list.
type build struct {
	key        string // PROJ-PLAN-N
	number     int
	state      string
	revision   string
	completed  string // Bamboo's buildCompletedTime, as sent
	durationMS int64
	passed     int
	failed     int
	skipped    int
}

// listExpand asks each listed result's own fields (Bamboo lists results
// collapsed otherwise); testsExpand asks a plan result for every test of
// every job, with the failures' messages.
const (
	listExpand  = "results.result"
	testsExpand = "stages.stage.results.result.testResults.allTests.testResult.errors"
)

var errNoResults = errors.New("upstream result list has no results.result")

// window is the plan's newest finished builds (up to MaxLast), newest
// first, and the version of the list they came from. The list is cached
// for the cache's TTL (a build may finish any time); one list serves
// every window and both views.
func (h *History) window(ctx context.Context, plan facade.PlanKey) ([]build, string, error) {
	at, err := resultPath(plan.String())
	if err != nil {
		return nil, "", err
	}
	e, err := h.cache.GetFor(ctx, "history:list:"+plan.String(), func(ctx context.Context) ([]byte, error) {
		return h.fetchList(ctx, at)
	}, nil)
	if err != nil {
		return nil, "", err
	}
	var list []listedResult
	if err := json.Unmarshal(e.Body, &list); err != nil {
		return nil, "", facade.Wrap(facade.ErrUpstreamBad, err)
	}
	builds := make([]build, 0, len(list))
	for _, r := range list {
		builds = append(builds, r.build())
	}
	return builds, e.Version, nil
}

// listedResult is a build as the cached list keeps it.
type listedResult struct {
	Key        string `json:"k"`
	Number     int    `json:"n"`
	State      string `json:"s"`
	Revision   string `json:"r"`
	Completed  string `json:"c"`
	DurationMS int64  `json:"d"`
	Passed     int    `json:"p"`
	Failed     int    `json:"f"`
	Skipped    int    `json:"x"`
}

func (r listedResult) build() build {
	return build{key: r.Key, number: r.Number, state: r.State, revision: r.Revision, completed: r.Completed,
		durationMS: r.DurationMS, passed: r.Passed, failed: r.Failed, skipped: r.Skipped}
}

// fetchList reads the newest MaxLast finished results in one call (a
// page of MaxLast: Bamboo documents no cap, and a shorter page is taken
// for the end, as package proxy's collector takes any short page under
// 100) and keeps what the views need of them.
func (h *History) fetchList(ctx context.Context, at upstream.Path) ([]byte, error) {
	q := url.Values{"expand": {listExpand}, "max-results": {strconv.Itoa(MaxLast)}}
	doc, err := h.up.Document(ctx, "history_results", at, q)
	if err != nil {
		return nil, err
	}
	results, ok := doc.Object["results"].(map[string]any)
	if !ok {
		return nil, facade.Wrap(facade.ErrUpstreamBad, errNoResults)
	}
	out := []listedResult{}
	for _, it := range items(results, "result") {
		r, _ := it.(map[string]any)
		if str(r["lifeCycleState"]) != "Finished" || str(r["buildResultKey"]) == "" {
			continue
		}
		out = append(out, listedResult{
			Key: str(r["buildResultKey"]), Number: num(r["buildNumber"]), State: str(r["buildState"]),
			Revision: str(r["vcsRevisionKey"]), Completed: str(r["buildCompletedTime"]),
			DurationMS: int64(num(r["buildDuration"])), Passed: num(r["successfulTestCount"]),
			Failed: num(r["failedTestCount"]), Skipped: num(r["skippedTestCount"]),
		})
	}
	return json.Marshal(out)
}

// resultPath is the upstream path of a plan's result list or of one
// result.
func resultPath(key string) (upstream.Path, error) {
	k, err := facade.ParseBuildKey(key)
	if err != nil {
		return upstream.Path{}, err
	}
	return upstream.Path{Resource: "result", Key: k}, nil
}

// summary is what a plan result's tests come to: each test once (over
// its jobs) with its outcome and, when it failed, its first error.
type summary struct {
	Tests []testOutcome `json:"t"`
}

type testOutcome struct {
	Class   string `json:"c"`
	Method  string `json:"m"`
	Outcome byte   `json:"o"` // outcomePassed, outcomeFailed, outcomeSkipped
	Message string `json:"e,omitempty"`
}

// Outcomes of a test in a build.
const (
	outcomeAbsent byte = iota
	outcomeSkipped
	outcomePassed
	outcomeFailed
)

// maxMessage bounds a kept error message (a stack can be long).
const maxMessage = 4096

// summariesOf returns the tests of every build, in order: held in
// process, else from the shared cache, else read upstream (a few at once)
// and kept for FinishedTTL.
func (h *History) summariesOf(ctx context.Context, builds []build) ([]*summary, error) {
	out := make([]*summary, len(builds))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(fetchers)
	for i, b := range builds {
		if s, ok := h.summaries.Get(b.key); ok {
			out[i] = s
			continue
		}
		g.Go(func() error {
			s, err := h.summaryOf(gctx, b.key)
			out[i] = s
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

func (h *History) summaryOf(ctx context.Context, key string) (*summary, error) {
	at, err := resultPath(key)
	if err != nil {
		return nil, err
	}
	life := func([]byte) time.Duration { return h.cfg.FinishedTTL }
	var made *summary // the summary this call's fill made, not decoded again
	e, err := h.cache.GetFor(ctx, "history:tests:"+key, func(ctx context.Context) ([]byte, error) {
		doc, err := h.up.Document(ctx, "history_tests", at, url.Values{"expand": {testsExpand}})
		if err != nil {
			return nil, err
		}
		made = summarize(doc.Object)
		return json.Marshal(made)
	}, life)
	if err != nil {
		return nil, err
	}
	s := made
	if s == nil || e.Status != cache.Miss {
		s = &summary{}
		if err := json.Unmarshal(e.Body, s); err != nil {
			return nil, facade.Wrap(facade.ErrUpstreamBad, err)
		}
	}
	h.summaries.Add(key, s)
	return s, nil
}

// summarize reduces a plan result, its jobs' tests expanded, to its
// summary. A test run by several jobs counts once: failed over passed
// over skipped.
func summarize(result map[string]any) *summary {
	s := &summary{}
	at := map[string]int{}
	for _, stage := range items(result["stages"], "stage") {
		for _, job := range items(field(stage, "results"), "result") {
			for _, t := range items(field(field(job, "testResults"), "allTests"), "testResult") {
				o := testOutcome{Class: str(field(t, "className")), Method: str(field(t, "methodName")), Outcome: outcomeOf(str(field(t, "status")))}
				if o.Outcome == outcomeFailed {
					if errs := items(field(t, "errors"), "error"); len(errs) > 0 {
						o.Message = truncate(str(field(errs[0], "message")), maxMessage)
					}
				}
				name := o.Class + "\x00" + o.Method
				if i, ok := at[name]; ok {
					if o.Outcome > s.Tests[i].Outcome {
						s.Tests[i] = o
					}
					continue
				}
				at[name] = len(s.Tests)
				s.Tests = append(s.Tests, o)
			}
		}
	}
	return s
}

// outcomeOf reads Bamboo's test status ("successful", "failed",
// "skipped"); anything else did not run.
func outcomeOf(status string) byte {
	switch strings.ToLower(status) {
	case "successful", "passed", "success":
		return outcomePassed
	case "failed", "failure", "error":
		return outcomeFailed
	}
	return outcomeSkipped
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 { // not inside a UTF-8 sequence
		n--
	}
	return s[:n]
}

// Reading decoded JSON (numbers are json.Number: upstream.Document).

func field(v any, name string) any {
	m, _ := v.(map[string]any)
	return m[name]
}

func items(list any, item string) []any {
	l, _ := field(list, item).([]any)
	return l
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func num(v any) int {
	switch n := v.(type) {
	case json.Number:
		i, _ := n.Int64()
		return int(i)
	case float64:
		return int(n)
	}
	return 0
}
