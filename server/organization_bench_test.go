package server_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/facade-dev/facade/internal/testkit/testclock"
	"github.com/facade-dev/facade/upstream/bambootest"
)

// BenchmarkBuildsAtOrganizationScale measures what a real organization's
// Bamboo (400 projects × 10 plans) costs, on the production path: the
// rate limit on (50/s per principal), info logs written as `facade serve`
// writes them, ten principals of one team that may see 300 projects, and
// the cache and handlers tuned as serve tunes them (TTL 30 s, stale 10 m,
// finished 24 h, live interval 2 s). Each sub-benchmark reports its
// figures beside its baseline (bench/README.md, "Builds at an
// organization's size and pace"); run it once:
//
//	go test -run '^$' -bench BuildsAtOrganizationScale -benchtime 1x ./server/
func BenchmarkBuildsAtOrganizationScale(b *testing.B) {
	b.Run("cold-overview", benchColdOverview)
	b.Run("watch-running-build", benchWatchRunningBuild)
	b.Run("finished-result-5min", benchFinishedResult)
	b.Run("finish-to-api", benchFinishToAPI)
}

// orgViewers are the team's principals.
const orgViewers = 10

func orgBenchEnv(b *testing.B, clock func() time.Time, opts ...envOption) *env {
	b.Helper()
	var policy strings.Builder
	for i := range 300 {
		fmt.Fprintf(&policy, "p, team:org, project:%s, view\n", bambootest.OrgProjectKey(i))
	}
	for v := range orgViewers {
		fmt.Fprintf(&policy, "g, viewer%d, team:org\n", v)
	}
	base := []envOption{withRateLimit(50), withPolicyLines(policy.String()), withProductionLogFile(b), withBuildClock(clock)}
	return newEnv(b, append(base, opts...)...)
}

func organization(s *bambootest.Server) { bambootest.Organization(s, 400, 10) }

// benchColdOverview: the upstream calls of a cold overview (every page of
// the project list with plans and of the latest results, max-results=1000)
// against a Bamboo that answers pages of 1,000, beside the same against
// one that answers pages of 100 (the page the facade asked for before).
func benchColdOverview(b *testing.B) {
	for _, page := range []int{1000, 100} {
		var calls, requests int
		var took time.Duration
		for range b.N {
			e := orgBenchEnv(b, time.Now, withOrganization(organization, bambootest.WithPageCap(page)))
			e.bamboo.ResetCalls()
			tok := token(b, "viewer0", "developer")
			start := time.Now()
			requests = 1
			if r := e.do(req{method: "GET", path: "/rest/api/latest/project?expand=projects.project.plans&max-results=1000", token: tok}); r.status != 200 {
				b.Fatalf("projects: %d", r.status)
			}
			for s := 0; s < 3000; s += 1000 {
				requests++
				if r := e.do(req{method: "GET", path: "/rest/api/latest/result?max-results=1000&start-index=" + strconv.Itoa(s), token: tok}); r.status != 200 {
					b.Fatalf("results: %d", r.status)
				}
			}
			took = time.Since(start)
			calls = len(e.bamboo.Calls())
		}
		b.ReportMetric(float64(calls), fmt.Sprintf("upstream-calls@bamboo-pages-%d", page))
		b.ReportMetric(took.Seconds(), fmt.Sprintf("s-cold@bamboo-pages-%d", page))
		b.Logf("cold overview of 4,000 plans (%d requests of max-results=1000, 3,000 visible) against Bamboo pages of %d: %d upstream calls, %v", requests, page, calls, took.Round(time.Millisecond))
	}
}

// benchWatchRunningBuild: upstream calls while one running build is
// watched for 30 s (each viewer polling every 500 ms with If-None-Match, as
// the page does; an injected clock, so both runs see the same moments) by
// 1 viewer on 1 instance, beside 10 viewers on 2 instances sharing Redis.
func benchWatchRunningBuild(b *testing.B) {
	const window, every = 30 * time.Second, 500 * time.Millisecond
	for _, viewers := range []int{1, 10} {
		var calls int
		for range b.N {
			clock := testclock.New()
			one := orgBenchEnv(b, clock.Now, withOrganization(organization))
			two := orgBenchEnv(b, clock.Now, withUpstreamOf(one), withRedis(one.rdb))
			key := one.bamboo.StartBuild(bambootest.OrgPlanKey(7, 3))
			one.bamboo.ResetCalls()
			tags := make([]string, viewers)
			for tick := time.Duration(0); tick < window; tick += every {
				for v := range viewers {
					inst := []*env{one, two}[v%2]
					r := inst.do(req{method: "GET", path: "/rest/api/latest/result/" + key, token: token(b, "viewer"+strconv.Itoa(v), "developer"),
						header: map[string]string{"If-None-Match": tags[v]}})
					switch r.status {
					case 200:
						tags[v] = r.header.Get("ETag")
					case 304:
					default:
						b.Fatalf("viewer %d: %d", v, r.status)
					}
					clock.Advance(every / time.Duration(viewers)) // spread, as people open pages
				}
			}
			calls = one.bamboo.CallCount("/rest/api/latest/result/")
		}
		label := "1-viewer"
		if viewers > 1 {
			label = "10-viewers-2-instances"
		}
		b.ReportMetric(float64(calls), "upstream-calls@"+label)
		b.Logf("one running build watched for %v by %s (polls every %v): %d upstream calls", window, label, every, calls)
	}
}

// benchFinishedResult: upstream calls of a finished result read every 3 s
// for 5 minutes (an injected clock: nobody waits), beside a plan's result
// list read the same way (kept for the TTL, 30 s).
func benchFinishedResult(b *testing.B) {
	for _, target := range []string{"/rest/api/latest/result/S007-P3-14", "/rest/api/latest/result/S007-P3"} {
		var calls int
		for range b.N {
			clock := testclock.New()
			e := orgBenchEnv(b, clock.Now, withOrganization(organization))
			tok := token(b, "viewer0", "developer")
			e.bamboo.ResetCalls()
			for range 100 {
				if r := e.do(req{method: "GET", path: target, token: tok}); r.status != 200 {
					b.Fatalf("%s: %d", target, r.status)
				}
				clock.Advance(3 * time.Second)
			}
			calls = len(e.bamboo.Calls())
		}
		name := "finished-result"
		if !strings.HasSuffix(target, "-14") {
			name = "result-list-ttl"
		}
		b.ReportMetric(float64(calls), "upstream-calls@"+name)
		b.Logf("%s read every 3 s for 5 min: %d upstream calls", target, calls)
	}
}

// benchFinishToAPI: seconds from Bamboo finishing a build to the API
// answering its final state to a viewer polling every 250 ms with
// If-None-Match, over 4 builds finished at spread moments.
func benchFinishToAPI(b *testing.B) {
	var total, worst time.Duration
	const builds = 4
	for range b.N {
		e := orgBenchEnv(b, time.Now, withOrganization(organization))
		tok := token(b, "viewer0", "developer")
		total, worst = 0, 0
		for i := range builds {
			key := e.bamboo.StartBuild(bambootest.OrgPlanKey(i, 0))
			path := "/rest/api/latest/result/" + key
			tag := e.do(req{method: "GET", path: path, token: tok}).header.Get("ETag")
			time.Sleep(time.Duration(i) * 500 * time.Millisecond) // finish at another moment of the interval
			e.bamboo.Finish(key, "Failed")
			finished := time.Now()
			for {
				r := e.do(req{method: "GET", path: path, token: tok, header: map[string]string{"If-None-Match": tag}})
				if r.status == 200 && strings.Contains(r.body, `"lifeCycleState":"Finished"`) {
					break
				}
				if time.Since(finished) > 10*time.Second {
					b.Fatalf("%s: not finished 10 s after Bamboo", key)
				}
				time.Sleep(250 * time.Millisecond)
			}
			d := time.Since(finished)
			total += d
			worst = max(worst, d)
		}
	}
	b.ReportMetric((total / builds).Seconds(), "s-finish-to-api-mean")
	b.ReportMetric(worst.Seconds(), "s-finish-to-api-worst")
	b.Logf("Bamboo finish to API (polling every 250 ms, live interval 2 s): mean %v, worst %v of %d builds", (total / builds).Round(10*time.Millisecond), worst.Round(10*time.Millisecond), builds)
}
