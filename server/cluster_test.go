package server_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/facade-dev/facade/accounts"
	"github.com/facade-dev/facade/auth"
	"github.com/facade-dev/facade/authz"
	"github.com/facade-dev/facade/cache"
	"github.com/facade-dev/facade/grades"
	"github.com/facade-dev/facade/internal/testkit/testlog"
	"github.com/facade-dev/facade/internal/testkit/testredis"
	"github.com/facade-dev/facade/proxy"
	"github.com/facade-dev/facade/ratelimit"
	"github.com/facade-dev/facade/redisdb"
	"github.com/facade-dev/facade/server"
	"github.com/facade-dev/facade/upstream"
)

// clusterPolicy is the policy both instances of the cluster tests load.
const clusterPolicy = `# grades: bob teaches english-101, where alice is enrolled
p, bob, class:english-101, view
p, bob, class:english-101, update
p, bob, class:english-101, post
g, student:alice, class:english-101
# money: payer moves money among the cl-* accounts
p, payer, account:cl-1, view_account
p, payer, account:cl-1, transfer
p, payer, account:cl-2, view_account
p, payer, account:cl-2, transfer
p, payer, account:cl-3, view_account
p, payer, account:cl-3, transfer
p, payer, account:cl-4, view_account
p, payer, account:cl-4, transfer
p, payer, account:cl-5, view_account
p, payer, account:cl-5, transfer
# rate limit: quota reads one balance, again and again
p, quota, account:rl-1, view_account
# builds: carol sees PROJ through her team, and one WEB plan
p, team:platform, project:PROJ, view
p, carol, plan:WEB-NIGHTLY, view
g, carol, team:platform
`

// TestCluster runs two service instances, as two processes would be, on
// one Redis Cluster of three masters, each with its own cluster client
// from redisdb.Open. Whatever one instance writes, the other must see:
// grade versions, transfers and their idempotency records, the rate limit,
// the upstream cache. No answer may be a 5xx (a CROSSSLOT script would
// be a 500) and no instance may log an error or fall back because Redis
// refused a command.
func TestCluster(t *testing.T) {
	started := time.Now()
	cluster := testredis.StartCluster(t, 3)
	t.Logf("3-master cluster ready in %s", time.Since(started).Round(time.Millisecond))
	policy := filepath.Join(t.TempDir(), "policy.csv")
	if err := os.WriteFile(policy, []byte(clusterPolicy), 0o644); err != nil {
		t.Fatal(err)
	}
	c := clusterSetup{addrs: cluster.Addrs, policy: policy}
	t.Run("GradesAcrossInstances", c.grades)
	t.Run("TransfersAcrossInstances", c.transfers)
	t.Run("RateLimitShared", c.rateLimit)
	t.Run("UpstreamCacheShared", c.builds)
	c.checkSpread(t)
}

// checkSpread makes sure the run exercised sharding: the keys written
// above live on more than one master.
func (c clusterSetup) checkSpread(t *testing.T) {
	t.Helper()
	rdb, _ := redisdb.Open(redisdb.Config{Addrs: c.addrs})
	defer rdb.Close()
	var mu sync.Mutex
	sizes := map[string]int64{}
	err := rdb.(*redis.ClusterClient).ForEachMaster(context.Background(), func(ctx context.Context, node *redis.Client) error {
		n, err := node.DBSize(ctx).Result()
		mu.Lock()
		sizes[node.Options().Addr] = n
		mu.Unlock()
		return err
	})
	used := 0
	for _, n := range sizes {
		if n > 0 {
			used++
		}
	}
	if err != nil || len(sizes) != 3 || used < 2 {
		t.Fatalf("keys per master %v (%v): the run did not spread over the cluster", sizes, err)
	}
	t.Logf("keys per master: %v", sizes)
}

// clusterSetup is what every instance of the cluster tests shares.
type clusterSetup struct {
	addrs  []string
	policy string
}

// clusterOptions are the per-pair settings.
type clusterOptions struct {
	rateLimit int
	bambooURL string // non-empty: wire the build endpoints to this upstream
}

// instance starts one service instance with its own cluster client,
// authorizer, stores and (optionally) upstream client and cache, behind an
// httptest listener with the limits of server.HTTPServer. Its logs are
// checked when the test ends.
func (c clusterSetup) instance(t *testing.T, o clusterOptions) *env {
	t.Helper()
	rdb, err := redisdb.Open(redisdb.Config{Addrs: c.addrs})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := rdb.(*redis.ClusterClient); !ok {
		t.Fatalf("redisdb.Open with Addrs gave a %T, want a cluster client", rdb)
	}
	t.Cleanup(func() { _ = rdb.Close() })
	logs := &testlog.Buffer{}
	log := slog.New(server.LogHandler(slog.NewJSONHandler(logs, nil)))
	az, err := authz.New(modelFile, c.policy, authz.Config{Log: log})
	if err != nil {
		t.Fatalf("authz: %v", err)
	}
	origins, _ := server.NewOrigins([]string{"*"}, []string{"https://app.example"})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	tokens, err := auth.NewTokens(ctx, auth.TokenConfig{Secret: testSecret})
	if err != nil {
		t.Fatal(err)
	}
	deps := server.Deps{
		Redis: rdb, Auth: tokens, Authz: az,
		Grades: grades.NewStore(rdb, grades.Config{Log: log}), Accounts: accounts.NewStore(rdb, accounts.Config{Log: log}),
	}
	if o.bambooURL != "" {
		up, err := upstream.New(upstream.Config{BaseURL: o.bambooURL, Token: bambooToken, Timeout: 5 * time.Second, Log: log})
		if err != nil {
			t.Fatal(err)
		}
		deps.Builds = proxy.New(up, cache.New(rdb, cache.Config{TTL: time.Minute, Stale: time.Minute, Log: log}), az, proxy.Config{Log: log})
		deps.UpstreamState = func() string { return up.BreakerState().String() }
	}
	srv, err := server.New(deps, server.Config{Origins: origins, RateLimit: o.rateLimit, MaxTransfer: 1_000_000, OpsOnAPI: true, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(srv)
	ts.Config = server.HTTPServer("", srv)
	ts.Listener = server.Listener(ts.Listener)
	ts.Start()
	t.Cleanup(ts.Close)
	e := &env{t: t, url: ts.URL, srv: srv, logs: logs}
	t.Cleanup(e.scanBodies)
	t.Cleanup(func() { checkClusterLogs(t, ts.URL, logs.String()) })
	if r := e.do(req{method: "GET", path: "/readyz"}); r.status != http.StatusOK {
		t.Fatalf("readyz on the cluster: %d %s", r.status, r.body)
	}
	return e
}

// pair starts instances A and B with the same settings.
func (c clusterSetup) pair(t *testing.T, o clusterOptions) (a, b *env) {
	t.Helper()
	return c.instance(t, o), c.instance(t, o)
}

// checkClusterLogs fails the test on a log line that shows Redis refusing a
// command (CROSSSLOT, a redirect the client did not follow), a request
// answered with a 5xx, or any line at warning level or above: the rate
// limiter and the cache log a warning and carry on when Redis fails, which
// would hide a cluster problem from the answers.
func checkClusterLogs(t *testing.T, instance, logs string) {
	t.Helper()
	for line := range strings.Lines(logs) {
		if strings.Contains(line, "CROSSSLOT") || strings.Contains(line, "MOVED") || strings.Contains(line, "TRYAGAIN") ||
			strings.Contains(line, `"status":5`) ||
			strings.Contains(line, `"level":"WARN"`) || strings.Contains(line, `"level":"ERROR"`) {
			t.Errorf("instance %s logged: %s", instance, strings.TrimSpace(line))
		}
	}
}

// grades: a version written on one instance is the version the other
// checks If-Match against.
func (c clusterSetup) grades(t *testing.T) {
	a, b := c.pair(t, clusterOptions{})
	bob, alice := token(t, "bob", "professor"), token(t, "alice", "student")
	path := "/student/alice/english/grade"
	body := func(g string) string { return `{"grade":"` + g + `"}` }
	ifMatch := func(v string) map[string]string { return map[string]string{"If-Match": `"` + v + `"`} }

	r := a.do(req{method: "POST", path: path, token: bob, body: body("B+")})
	if r.status != 201 || r.header.Get("ETag") != `"1"` || r.header.Get("Location") != path {
		t.Fatalf("A creates: %d %v %s", r.status, r.header, r.body)
	}
	if r := b.do(req{method: "POST", path: path, token: bob, body: body("A")}); r.status != 409 {
		t.Fatalf("B creates the same grade again: %d %s", r.status, r.body)
	}
	r = b.do(req{method: "GET", path: path, token: alice})
	rec := r.problem(t) // a plain JSON object
	if r.status != 200 || r.header.Get("ETag") != `"1"` || rec["grade"] != "B+" || rec["updated_by"] != "bob" || rec["version"] != float64(1) {
		t.Fatalf("alice reads on B: %d %s", r.status, r.body)
	}
	if r := b.do(req{method: "PUT", path: path, token: bob, body: body("A"), header: ifMatch("1")}); r.status != 200 || r.header.Get("ETag") != `"2"` {
		t.Fatalf("B updates with If-Match 1: %d %s", r.status, r.body)
	}
	r = a.do(req{method: "PUT", path: path, token: bob, body: body("C"), header: ifMatch("1")})
	if r.status != 412 || r.problem(t)["detail"] != "The resource has changed; If-Match does not match its current version." {
		t.Fatalf("A updates with the If-Match B made stale: %d %s", r.status, r.body)
	}
	if r := a.do(req{method: "GET", path: path, token: bob}); r.status != 200 || r.header.Get("ETag") != `"2"` || r.problem(t)["grade"] != "A" {
		t.Fatalf("bob reads on A after the stale update: %d %s", r.status, r.body)
	}

	// Ten writers holding ETag "2", half on each instance: one wins.
	statuses := make([]int, 10)
	var wg sync.WaitGroup
	for i := range statuses {
		inst := []*env{a, b}[i%2]
		wg.Go(func() {
			statuses[i], _, _, _ = clusterCall(inst.url, http.MethodPut, path, bob, body("B"), ifMatch("2"))
		})
	}
	wg.Wait()
	won, stale := 0, 0
	for _, s := range statuses {
		switch s {
		case 200:
			won++
		case 412:
			stale++
		}
	}
	if won != 1 || stale != len(statuses)-1 {
		t.Fatalf("10 concurrent updates with one If-Match over A and B: %v; want one 200, nine 412", statuses)
	}
	if r := b.do(req{method: "GET", path: path, token: alice}); r.header.Get("ETag") != `"3"` || r.problem(t)["grade"] != "B" {
		t.Fatalf("alice reads on B after the race: %d %v %s", r.status, r.header.Get("ETag"), r.body)
	}
	rdb, _ := redisdb.Open(redisdb.Config{Addrs: c.addrs})
	defer rdb.Close()
	audit, err := grades.NewStore(rdb, grades.Config{Log: quietLog}).Audit(context.Background(), studentID("alice"), grades.SubjectEnglish, 10)
	if err != nil || len(audit) != 3 {
		t.Fatalf("audit trail on the cluster: %+v %v; want 3 changes", audit, err)
	}

	// Posting: the policy set on A holds a change made on B from alice
	// (on either instance) until a post on B releases it.
	if r := a.do(req{method: "PUT", path: "/class/english-101/posting", token: bob, body: `{"policy":"manual"}`}); r.status != 200 {
		t.Fatalf("A turns posting manual: %d %s", r.status, r.body)
	}
	if r := b.do(req{method: "PUT", path: path, token: bob, body: body("C"), header: ifMatch("3")}); r.status != 200 || r.header.Get("ETag") != `"4-unposted"` {
		t.Fatalf("B changes the grade under manual posting: %d %v %s", r.status, r.header, r.body)
	}
	for _, inst := range []*env{a, b} {
		if r := inst.do(req{method: "GET", path: path, token: alice}); r.header.Get("ETag") != `"3"` || r.problem(t)["grade"] != "B" {
			t.Fatalf("alice reads before the post: %d %v %s", r.status, r.header.Get("ETag"), r.body)
		}
	}
	if r := b.do(req{method: "POST", path: "/class/english-101/grades/post", token: bob}); r.status != 200 || r.problem(t)["posted"] != float64(1) {
		t.Fatalf("B posts: %d %s", r.status, r.body)
	}
	if r := a.do(req{method: "GET", path: path, token: alice}); r.header.Get("ETag") != `"4"` || r.problem(t)["grade"] != "C" {
		t.Fatalf("alice reads on A after the post: %d %v %s", r.status, r.header.Get("ETag"), r.body)
	}
	if r := a.do(req{method: "PUT", path: "/class/english-101/posting", token: bob, body: `{"policy":"automatic"}`}); r.status != 200 {
		t.Fatalf("A turns posting automatic: %d %s", r.status, r.body)
	}
}

// transfers: an Idempotency-Key used on A is known to B; a few hundred
// concurrent transfers over both keep every cent.
func (c clusterSetup) transfers(t *testing.T) {
	a, b := c.pair(t, clusterOptions{})
	rdb, _ := redisdb.Open(redisdb.Config{Addrs: c.addrs})
	t.Cleanup(func() { _ = rdb.Close() })
	ids := []string{"cl-1", "cl-2", "cl-3", "cl-4", "cl-5"}
	ma, mb := clusterMoney(t, a, rdb, ids), clusterMoney(t, b, rdb, ids)
	for _, id := range ids {
		if _, err := accounts.NewStore(rdb, accounts.Config{Log: quietLog}).Seed(context.Background(),
			accounts.SeedAccount{ID: id, Owner: "owner-" + id, Currency: "EUR", Balance: "400.00"}); err != nil {
			t.Fatalf("seed %s: %v", id, err)
		}
	}
	book := map[string]moneyTransfer{}

	first, err := ma.transfer("cl-1", "cl-2", "12.34", "cluster-key-1")
	if err != nil || first.status != 201 || first.replayed() {
		t.Fatalf("transfer on A: %d %s %v", first.status, first.body, err)
	}
	tr, err := decodeMoneyTransfer(first, "cl-1", "cl-2", "12.34")
	if err != nil {
		t.Fatal(err)
	}
	book[tr.TransferID] = tr
	again, err := mb.transfer("cl-1", "cl-2", "12.34", "cluster-key-1")
	if err != nil || again.status != 201 || !again.replayed() || !bytes.Equal(again.body, first.body) {
		t.Fatalf("same key replayed on B: %d replayed=%q %s %v; first %s", again.status,
			again.header.Get("Idempotent-Replayed"), again.body, err, first.body)
	}
	other, err := mb.transfer("cl-1", "cl-2", "1.00", "cluster-key-1")
	if err != nil {
		t.Fatal(err)
	}
	if err := moneyProblemError(other, 422, "This Idempotency-Key was already used for a different request."); err != nil {
		t.Fatalf("same key, other amount, on B: %v", err)
	}
	for id, want := range map[string]int64{"cl-1": 38766, "cl-2": 41234} {
		for _, m := range []*moneyEnv{ma, mb} {
			if got, err := m.balance(id); err != nil || got != want {
				t.Fatalf("balance of %s after a transfer and its replay: %d cents %v, want %d", id, got, err, want)
			}
		}
	}
	for _, m := range []*moneyEnv{ma, mb} {
		lines, err := m.statement("cl-1")
		if err != nil || len(lines) != 1 || lines[0].TransferID != tr.TransferID || lines[0].Direction != "debit" {
			t.Fatalf("statement of cl-1 on %s: %+v %v", m.url, lines, err)
		}
	}

	// A few hundred at once, each job on A or B in turn; a job sent twice
	// goes to both at the same instant with one key.
	jobs := concurrencyJobs(ids, 300)
	answers := make([][]moneyAnswer, len(jobs))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < len(jobs); i = int(next.Add(1)) - 1 {
				answers[i] = sendOverBoth(t, ma, mb, i, jobs[i])
			}
		})
	}
	wg.Wait()
	tally := concurrencyTally{book: book, first: map[int][]byte{}}
	for i, job := range jobs {
		tally.check(t, i, job, answers[i])
	}
	if tally.replays == 0 {
		t.Error("no job sent to A and B at once was answered as a replay: the run proves little")
	}
	// Every keyed job once more, on A: those done on B must replay too.
	repeated := repeatKeyed(t, ma, jobs, tally.first)
	_, complete := ma.auditMoney(t, tally.book)
	t.Logf("%d requests over A and B: %d transfers, %d concurrent replays, %d refused, %d later replays; statements complete: %v",
		tally.requests, len(tally.book), tally.replays, tally.refused, repeated, complete)
}

// clusterMoney is a moneyEnv view of instance e as the principal payer.
func clusterMoney(t *testing.T, e *env, rdb redis.UniversalClient, ids []string) *moneyEnv {
	t.Helper()
	transport := &http.Transport{MaxIdleConns: 64, MaxIdleConnsPerHost: 64, IdleConnTimeout: 30 * time.Second}
	t.Cleanup(transport.CloseIdleConnections)
	opening := map[string]int64{}
	for _, id := range ids {
		opening[id] = 40000
	}
	return &moneyEnv{url: e.url, client: &http.Client{Transport: transport, Timeout: 20 * time.Second},
		rdb: rdb, token: token(t, moneyPrincipal, "customer"), ids: ids, opening: opening}
}

// sendOverBoth sends job i to A (even i) or B (odd i); a job sent twice
// goes to both, released together.
func sendOverBoth(t *testing.T, a, b *moneyEnv, i int, job concurrencyJob) []moneyAnswer {
	if !job.twice {
		return []*moneyEnv{a, b}[i%2].sendJob(t, job)
	}
	out := make([]moneyAnswer, 2)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for k, m := range []*moneyEnv{a, b} {
		wg.Go(func() {
			<-start
			ans, err := m.transfer(job.from, job.to, job.amount, job.key)
			if err != nil {
				t.Errorf("transfer %+v on %s: %v", job, m.url, err)
			}
			out[k] = ans
		})
	}
	close(start)
	wg.Wait()
	return out
}

// rateLimit: at 1 request a second (burst 2) per principal, requests
// spread over A and B together get what one instance alone would grant.
// The rate is low so that the refill over the test stays small however
// slow the machine: 40 requests are refused on both instances unless they
// take more than about a second each, and a settled debt of even one
// request takes a second to repay.
func (c clusterSetup) rateLimit(t *testing.T) {
	const rate, burst, requests = 1, 2, 40
	a, b := c.pair(t, clusterOptions{rateLimit: rate})
	rdb, _ := redisdb.Open(redisdb.Config{Addrs: c.addrs})
	defer rdb.Close()
	if _, err := accounts.NewStore(rdb, accounts.Config{Log: quietLog}).Seed(context.Background(),
		accounts.SeedAccount{ID: "rl-1", Owner: "quota", Currency: "EUR", Balance: "1.00"}); err != nil {
		t.Fatal(err)
	}
	quota := token(t, "quota", "customer")
	allowed := map[*env]int{}
	limited := map[*env]int{}
	started := time.Now()
	for i := range requests {
		e := []*env{a, b}[i%2]
		r := e.do(req{method: "GET", path: "/rs/account/rl-1/balance", token: quota})
		switch r.status {
		case 200:
			allowed[e]++
		case 429:
			limited[e]++
			if s, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || s < 1 {
				t.Errorf("429 with Retry-After %q", r.header.Get("Retry-After"))
			}
		default:
			t.Fatalf("request %d: %d %s", i, r.status, r.body)
		}
	}
	elapsed := time.Since(started)
	total := allowed[a] + allowed[b]
	// One shared limit grants the burst plus what refilled meanwhile, and
	// each instance decides locally between settlements (package
	// ratelimit): two instances may overshoot that by at most one burst
	// plus one 100 ms interval's refill, once. Two separate limits would
	// grant twice the burst plus the refill on each, with no debt after.
	most := burst + int(elapsed.Seconds()*rate) + 1 + burst + rate/10 + 1
	if total < burst || total > most || limited[a] == 0 || limited[b] == 0 {
		t.Fatalf("%d requests in %s over A and B: %d+%d allowed, %d+%d refused; want %d to %d allowed, refusals on both",
			requests, elapsed.Round(time.Millisecond), allowed[a], allowed[b], limited[a], limited[b], burst, most)
	}
	// The overshoot is debt once the instances settle: both refuse now,
	// where two separate limits would each have refilled a request.
	if total > burst+1 {
		waitSettled(t, rdb, ratelimit.BucketKey("facade:rl:", "quota"), total, rate, started)
		// Redis holds every admission; each instance learns it at its
		// next settlement, after which both refuse in the same round.
		deadline := time.Now().Add(30 * time.Second)
		for {
			ra := a.do(req{method: "GET", path: "/rs/account/rl-1/balance", token: quota})
			rb := b.do(req{method: "GET", path: "/rs/account/rl-1/balance", token: quota})
			if ra.status == 429 && rb.status == 429 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("after settling %d admissions of a burst of %d: %d and %d, want 429 on both instances", total, burst, ra.status, rb.status)
			}
		}
	}
	t.Logf("%d requests in %s: %d allowed (A %d, B %d), limit shared", requests, elapsed.Round(time.Millisecond), total, allowed[a], allowed[b])
}

// waitSettled waits until the rate-limit bucket in Redis counts at least
// admitted requests at rate since started: the instances have settled what
// they admitted (the bucket's value is its theoretical arrival time in
// microseconds of Redis's clock, ratelimit/take.lua).
func waitSettled(t *testing.T, rdb redis.UniversalClient, key string, admitted, rate int, started time.Time) {
	t.Helper()
	ctx := context.Background()
	need := time.Duration(admitted) * time.Second / time.Duration(rate)
	for deadline := time.Now().Add(30 * time.Second); ; {
		tat, err := rdb.Get(ctx, key).Int64()
		now, err2 := rdb.Time(ctx).Result()
		if err == nil && err2 == nil {
			ahead := time.Duration(tat-now.UnixMicro()) * time.Microsecond
			if ahead >= need-time.Since(started) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the limiter's bucket never counted the %d admissions (get %v, time %v)", admitted, err, err2)
		}
		time.Sleep(10 * time.Millisecond) // a poll of the observable state
	}
}

// builds: what A fetched upstream, B serves from the shared cache, with
// its own links; concurrent misses on both instances make one upstream call.
func (c clusterSetup) builds(t *testing.T) {
	bamboo, bambooURL := startBamboo(t)
	a, b := c.pair(t, clusterOptions{bambooURL: bambooURL})
	carol := token(t, "carol", "developer")
	const projects = "/rest/api/latest/project?expand=projects.project.plans"

	ra := a.do(req{method: "GET", path: projects, token: carol})
	if ra.status != 200 || ra.header.Get("X-Cache") != "MISS" {
		t.Fatalf("project list on A: %d X-Cache %q %s", ra.status, ra.header.Get("X-Cache"), ra.body)
	}
	calls := bamboo.CallCount("/rest/api/latest/project")
	rb := b.do(req{method: "GET", path: projects, token: carol})
	if rb.status != 200 || rb.header.Get("X-Cache") != "HIT" {
		t.Fatalf("project list on B after A: %d X-Cache %q %s", rb.status, rb.header.Get("X-Cache"), rb.body)
	}
	if n := bamboo.CallCount("/rest/api/latest/project"); calls == 0 || n != calls {
		t.Fatalf("upstream project calls: %d for A's miss, %d after B's hit", calls, n)
	}
	if ka, kb := planKeys(t, ra.body), planKeys(t, rb.body); fmt.Sprint(ka) != fmt.Sprint(kb) || !kb["PROJ-CORE"] || !kb["WEB-NIGHTLY"] || kb["WEB-PR"] {
		t.Fatalf("plans on A %v, on B %v", ka, kb)
	}
	if !strings.Contains(rb.body, b.url+"/") || strings.Contains(rb.body, a.url+"/") || strings.Contains(rb.body, bambooURL+"/") {
		t.Fatalf("B's links must point at B, not at A (%s) or upstream (%s): %s", a.url, bambooURL, rb.body)
	}

	// Eight concurrent first requests for one result page, four per instance.
	const results = "/rest/api/latest/result/WEB-NIGHTLY?expand=results.result.artifacts"
	statuses := make([]int, 8)
	caches := make([]string, 8)
	var wg sync.WaitGroup
	for i := range statuses {
		inst := []*env{a, b}[i%2]
		wg.Go(func() {
			var h http.Header
			statuses[i], h, _, _ = clusterCall(inst.url, http.MethodGet, results, carol, "", nil)
			if h != nil {
				caches[i] = h.Get("X-Cache")
			}
		})
	}
	wg.Wait()
	for i, s := range statuses {
		if s != 200 || (caches[i] != "MISS" && caches[i] != "HIT") {
			t.Errorf("concurrent result request %d: %d X-Cache %q", i, s, caches[i])
		}
	}
	if n := bamboo.CallCount("/rest/api/latest/result/WEB-NIGHTLY"); n != 1 {
		t.Fatalf("8 concurrent misses over A and B made %d upstream calls, want 1", n)
	}
}

// clusterCall makes one call and never fails the test itself, so it may run
// on any goroutine. Unsafe methods carry the anti-forgery header and, with
// a body, a JSON content type.
func clusterCall(base, method, path, tok, body string, header map[string]string) (int, http.Header, string, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	hr, err := http.NewRequest(method, base+path, rd)
	if err != nil {
		return 0, nil, "", err
	}
	hr.Header.Set("Authorization", "Bearer "+tok)
	if method != http.MethodGet {
		hr.Header.Set("X-XSRF-TOKEN", "cluster-test")
		if body != "" {
			hr.Header.Set("Content-Type", "application/json")
		}
	}
	for k, v := range header {
		hr.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(hr)
	if err != nil {
		return 0, nil, "", err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, string(b), err
}
