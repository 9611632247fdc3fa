package grantusage_test

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	facade "github.com/facade-dev/facade"
	"github.com/facade-dev/facade/authz"
	"github.com/facade-dev/facade/authz/compiled"
	"github.com/facade-dev/facade/authz/grantusage"
	"github.com/facade-dev/facade/authz/internal/policytest"
	"github.com/facade-dev/facade/authz/policytool"
	"github.com/facade-dev/facade/internal/testkit/testclock"
	"github.com/facade-dev/facade/internal/testkit/testredis"
	"github.com/facade-dev/facade/metrics"
)

// usageOf flushes a's counts to rdb and returns each line's uses in the
// last 90 days by its text, as `facade policy usage` reads them from the
// files at modelPath and policyPath.
func usageOf(t *testing.T, a *authz.Authorizer, modelPath, policyPath string, rdb redis.UniversalClient, now time.Time) map[string]uint64 {
	t.Helper()
	if err := a.FlushUsage(context.Background(), rdb); err != nil {
		t.Fatal(err)
	}
	u, err := grantusage.ReadUsage(context.Background(), rdb, now, 90*24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	p, err := policytool.Open(modelPath, policyPath)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]uint64{}
	for _, l := range p.LinesUsed(u) {
		out[l.Text] = l.Uses
	}
	return out
}

func wantUses(t *testing.T, got map[string]uint64, want map[string]uint64) {
	t.Helper()
	for line, n := range want {
		if got[line] != n {
			t.Errorf("%q: %d uses, want %d (all: %v)", line, got[line], n, got)
		}
	}
}

// TestUsageCreditsEveryLineOnTheWay: an allow credits its p line and each
// g line that led to it (nested teams, a token's group, an enrollment, a
// role line, a wildcard); a denial credits nothing; lines nobody's
// decision went through stay at zero.
func TestUsageCreditsEveryLineOnTheWay(t *testing.T) {
	clock := testclock.New()
	modelPath, policyPath := policytest.Files(t,
		"p, alice, account:1, view_account",
		"p, team:web, project:WEB, view",
		"g, carol, team:frontend",
		"g, team:frontend, team:web",
		"p, group:english-graders, class:english-101, view",
		"g, student:henry, class:english-101",
		"p, team:ops, plan:OPS-*, view",
		"g, dave, team:ops",
		"g, erin, role:professor",
		"p, erin, class:english-101, view",
		"p, zed, account:9, view_account",
		"g, frank, team:web",
		"g, group:english-graders, role:professor",
		"g, group:devs, team:frontend",
	)
	a, err := authz.New(modelPath, policyPath, authz.Config{Now: clock.Now, RecordUsage: true, Log: discard})
	if err != nil {
		t.Fatal(err)
	}
	rdb := testredis.Client(t)
	allow := func(ok bool, what string) {
		t.Helper()
		if !ok {
			t.Fatalf("%s: denied; the fixture does not say what this test assumes", what)
		}
	}
	allow(a.CanViewAccount(facade.Principal{ID: "alice"}, policytest.AccountID("1")), "alice account 1")
	allow(a.CanViewAccount(facade.Principal{ID: "alice"}, policytest.AccountID("1")), "alice account 1")
	allow(a.CanViewProject(facade.Principal{ID: "carol"}, policytest.ProjectKey("WEB")), "carol project WEB")
	allow(a.CanViewProject(facade.Principal{ID: "ivy", Groups: []string{"ops", "devs"}}, policytest.ProjectKey("WEB")), "ivy (token group devs) project WEB")
	allow(a.CanViewGrade(facade.Principal{ID: "zoe", Role: facade.RoleProfessor, Groups: []string{"english-graders"}}, policytest.StudentID("henry")), "zoe henry")
	allow(a.CanViewPlan(facade.Principal{ID: "dave"}, policytest.PlanKey("OPS", "NIGHTLY")), "dave OPS-NIGHTLY")
	allow(a.CanViewGrade(facade.Principal{ID: "erin"}, policytest.StudentID("henry")), "erin henry")
	// Denials credit nothing, not even the lines they looked at.
	if a.CanViewAccount(facade.Principal{ID: "mallory"}, policytest.AccountID("1")) || a.CanViewAccount(facade.Principal{ID: "alice"}, policytest.AccountID("9")) ||
		a.CanViewGrade(facade.Principal{ID: "frank"}, policytest.StudentID("henry")) {
		t.Fatal("a question the fixture denies was allowed")
	}
	got := usageOf(t, a, modelPath, policyPath, rdb, clock.Now())
	wantUses(t, got, map[string]uint64{
		"p, alice, account:1, view_account":                 2,
		"p, team:web, project:WEB, view":                    2,
		"g, carol, team:frontend":                           1,
		"g, team:frontend, team:web":                        2, // carol's and ivy's
		"g, group:devs, team:frontend":                      1, // from ivy's token
		"p, group:english-graders, class:english-101, view": 1,
		"g, student:henry, class:english-101":               2, // zoe's and erin's
		"p, team:ops, plan:OPS-*, view":                     1,
		"g, dave, team:ops":                                 1,
		"g, erin, role:professor":                           1, // erin's token has no role
		"p, erin, class:english-101, view":                  1,
		"p, zed, account:9, view_account":                   0,
		"g, frank, team:web":                                0,
		"g, group:english-graders, role:professor":          0, // zoe's token said professor
	})
	// A second flush with nothing new adds nothing.
	if got := usageOf(t, a, modelPath, policyPath, rdb, clock.Now()); got["p, alice, account:1, view_account"] != 2 {
		t.Errorf("after an empty flush alice's line has %d uses, want 2", got["p, alice, account:1, view_account"])
	}
}

// TestUsageCreditsTheDenyLineThatDecided: under a deny model a deny line
// that decides is used (it is doing its job); the allow wildcard it
// overrides is not credited for that question.
func TestUsageCreditsTheDenyLineThatDecided(t *testing.T) {
	dir := t.TempDir()
	modelPath, policyPath := filepath.Join(dir, "model.conf"), filepath.Join(dir, "policy.csv")
	policytest.WriteFile(t, modelPath, policytest.Families["deny-keymatch"])
	policytest.WriteFile(t, policyPath, "p, bob, account:*, view_account, allow\np, bob, account:7, view_account, deny\np, bob, account:8, transfer, deny\n")
	clock := testclock.New()
	a, err := authz.New(modelPath, policyPath, authz.Config{Now: clock.Now, RecordUsage: true, Log: discard})
	if err != nil {
		t.Fatal(err)
	}
	if a.CanViewAccount(facade.Principal{ID: "bob"}, policytest.AccountID("7")) || !a.CanViewAccount(facade.Principal{ID: "bob"}, policytest.AccountID("8")) {
		t.Fatal("the fixture does not say what this test assumes")
	}
	wantUses(t, usageOf(t, a, modelPath, policyPath, testredis.Client(t), clock.Now()), map[string]uint64{
		"p, bob, account:*, view_account, allow": 1,
		"p, bob, account:7, view_account, deny":  1,
		"p, bob, account:8, transfer, deny":      0,
	})
}

// TestUsageOnTheCasbinPath: a model the index does not decide (a
// superuser clause) is decided by casbin's Enforce; its allows credit the
// p row casbin names and the g lines from the request to it.
func TestUsageOnTheCasbinPath(t *testing.T) {
	dir := t.TempDir()
	modelPath, policyPath := filepath.Join(dir, "model.conf"), filepath.Join(dir, "policy.csv")
	policytest.WriteFile(t, modelPath, policytest.RootModel(t))
	policytest.WriteFile(t, policyPath, "p, team:web, project:WEB, view\ng, carol, team:frontend\ng, team:frontend, team:web\ng, frank, team:web\np, group:ops, account:1, view_account\n")
	clock := testclock.New()
	a, err := authz.New(modelPath, policyPath, authz.Config{Now: clock.Now, RecordUsage: true, Log: discard})
	if err != nil {
		t.Fatal(err)
	}
	if a.Status().Decider != compiled.DeciderCasbin {
		t.Fatalf("decided by %s, want casbin", a.Status().Decider)
	}
	if !a.CanViewProject(facade.Principal{ID: "carol"}, policytest.ProjectKey("WEB")) || !a.CanViewAccount(facade.Principal{ID: "ivan", Groups: []string{"ops"}}, policytest.AccountID("1")) ||
		a.CanViewProject(facade.Principal{ID: "mallory"}, policytest.ProjectKey("WEB")) {
		t.Fatal("the fixture does not say what this test assumes")
	}
	wantUses(t, usageOf(t, a, modelPath, policyPath, testredis.Client(t), clock.Now()), map[string]uint64{
		"p, team:web, project:WEB, view":        1,
		"g, carol, team:frontend":               1,
		"g, team:frontend, team:web":            1,
		"g, frank, team:web":                    0,
		"p, group:ops, account:1, view_account": 1,
	})
}

// TestUsageSurvivesInstancesRestartsAndReformatting: two instances on one
// Redis add up; a new instance (a restart) adds to the same lines; a
// reload of the file re-spaced, re-quoted and re-ordered keeps each
// line's history, and an edited line starts its own.
func TestUsageSurvivesInstancesRestartsAndReformatting(t *testing.T) {
	clock := testclock.New()
	modelPath, policyPath := policytest.Files(t, "p, alice, account:1, view_account", "p, bob, account:2, view_account")
	rdb := testredis.Client(t)
	start := func() *authz.Authorizer {
		a, err := authz.New(modelPath, policyPath, authz.Config{Now: clock.Now, RecordUsage: true, Log: discard})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	one, two := start(), start()
	one.CanViewAccount(facade.Principal{ID: "alice"}, policytest.AccountID("1"))
	two.CanViewAccount(facade.Principal{ID: "alice"}, policytest.AccountID("1"))
	two.CanViewAccount(facade.Principal{ID: "bob"}, policytest.AccountID("2"))
	if err := one.FlushUsage(context.Background(), rdb); err != nil {
		t.Fatal(err)
	}
	clock.Advance(3 * time.Second)
	wantUses(t, usageOf(t, two, modelPath, policyPath, rdb, clock.Now()), map[string]uint64{"p, alice, account:1, view_account": 2, "p, bob, account:2, view_account": 1})

	restarted := start()
	restarted.CanViewAccount(facade.Principal{ID: "alice"}, policytest.AccountID("1"))
	clock.Advance(24 * time.Hour) // the next day's hash
	policytest.ReplaceFile(t, policyPath, "# re-formatted\np,bob,account:2,view_account\n\"p\", \"alice\",account:1,  view_account\np, bob, account:3, view_account\n")
	if err := restarted.Reload(); err != nil {
		t.Fatal(err)
	}
	restarted.CanViewAccount(facade.Principal{ID: "alice"}, policytest.AccountID("1"))
	restarted.CanViewAccount(facade.Principal{ID: "bob"}, policytest.AccountID("3"))
	got := usageOf(t, restarted, modelPath, policyPath, rdb, clock.Now())
	// The last use is the latest flush's time, whichever instance wrote
	// last: one with a slow clock does not move it back.
	slow := testclock.New()
	late, err := authz.New(modelPath, policyPath, authz.Config{Now: slow.Now, RecordUsage: true, Log: discard})
	if err != nil {
		t.Fatal(err)
	}
	late.CanViewAccount(facade.Principal{ID: "alice"}, policytest.AccountID("1"))
	if err := late.FlushUsage(context.Background(), rdb); err != nil {
		t.Fatal(err)
	}
	u, err := grantusage.ReadUsage(context.Background(), rdb, clock.Now(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if last := u.Last["p, alice, account:1, view_account"]; !last.Equal(clock.Now()) {
		t.Errorf("alice's line last used %v, want %v (the latest flush)", last, clock.Now())
	}
	wantUses(t, got, map[string]uint64{
		`"p", "alice",account:1,  view_account`: 4, // before the reload on the old file, after it on the new
		"p,bob,account:2,view_account":          1,
		"p, bob, account:3, view_account":       1,
	})
}

// TestUsageWritesToRedisAFewTimesASecondNotPerRequest: a busy instance
// deciding as fast as it can for a second, flushing every 200 ms, sends
// Redis one script call per flush (measured by Redis itself), whatever
// the number of decisions.
func TestUsageWritesToRedisAFewTimesASecondNotPerRequest(t *testing.T) {
	srv := testredis.Start(t, testredis.Options{})
	rdb := srv.Client(t)
	lines := make([]string, 0, 400)
	for i := range 200 {
		lines = append(lines, "p, team:t"+strconv.Itoa(i)+", account:"+strconv.Itoa(i)+", view_account", "g, u"+strconv.Itoa(i)+", team:t"+strconv.Itoa(i))
	}
	modelPath, policyPath := policytest.Files(t, lines...)
	a, err := authz.New(modelPath, policyPath, authz.Config{RecordUsage: true, Log: discard})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	done := make(chan struct{})
	go func() { a.RecordUsage(ctx, rdb, 200*time.Millisecond); close(done) }()
	decisions := 0
	for ctx.Err() == nil {
		i := decisions % 200
		if !a.CanViewAccount(facade.Principal{ID: "u" + strconv.Itoa(i)}, policytest.AccountID(strconv.Itoa(i))) {
			t.Fatal("the fixture does not say what this test assumes")
		}
		decisions++
	}
	<-done
	if err := a.FlushUsage(context.Background(), rdb); err != nil {
		t.Fatal(err)
	}
	stats, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	for _, line := range strings.Split(stats, "\n") {
		for _, cmd := range []string{"cmdstat_evalsha:", "cmdstat_eval:"} {
			if rest, ok := strings.CutPrefix(line, cmd+"calls="); ok {
				n, _ := strconv.Atoi(rest[:strings.IndexByte(rest, ',')])
				calls += n
			}
		}
	}
	t.Logf("%d decisions in 1 s, %d script calls to Redis (%d flushes of 200 ms, the last at the end)", decisions, calls, 6)
	// 5 timed flushes and the last; the first EVALSHA of a fresh server is
	// answered NOSCRIPT and re-sent as EVAL.
	if calls > 8 || calls < 2 || decisions < 1000 {
		t.Fatalf("%d script calls for %d decisions, want at most 8 (one per flush)", calls, decisions)
	}
	got := usageOf(t, a, modelPath, policyPath, rdb, time.Now())
	var total uint64
	for _, n := range got {
		total += n
	}
	if total != 2*uint64(decisions) { // each decision: its p line and its membership
		t.Fatalf("Redis holds %d uses for %d decisions of two lines each", total, decisions)
	}
}

// TestUsageIsKeptWhileRedisIsDown: a flush that fails keeps its counts,
// and the next one after Redis is back writes them with the new ones;
// facade_policy_usage_flushes_total tells ops which flushes failed.
func TestUsageIsKeptWhileRedisIsDown(t *testing.T) {
	srv := testredis.Start(t, testredis.Options{})
	rdb := srv.Client(t)
	m := metrics.New()
	modelPath, policyPath := policytest.Files(t, "p, alice, account:1, view_account")
	a, err := authz.New(modelPath, policyPath, authz.Config{RecordUsage: true, Log: discard, Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	flushes := func(result string) float64 {
		return policytest.CounterValue(m.PolicyUsageFlushes.WithLabelValues(result))
	}
	a.CanViewAccount(facade.Principal{ID: "alice"}, policytest.AccountID("1"))
	srv.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := a.FlushUsage(ctx, rdb); err == nil {
		t.Fatal("a flush to a stopped Redis reported no error")
	}
	if flushes("error") != 1 || flushes("ok") != 0 {
		t.Fatalf("after a failed flush the metric says %v failed, %v ok; want 1 and 0", flushes("error"), flushes("ok"))
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	a.CanViewAccount(facade.Principal{ID: "alice"}, policytest.AccountID("1"))
	if got := usageOf(t, a, modelPath, policyPath, rdb, time.Now()); got["p, alice, account:1, view_account"] != 2 {
		t.Fatalf("after Redis came back: %d uses, want 2 (one kept from the failed flush)", got["p, alice, account:1, view_account"])
	}
	if flushes("ok") != 1 {
		t.Fatalf("after Redis came back the metric says %v flushes ok, want 1", flushes("ok"))
	}
}

func newRecording(t *testing.T, lines ...string) (*authz.Authorizer, string) {
	t.Helper()
	modelPath, policyPath := policytest.Files(t, lines...)
	a, err := authz.New(modelPath, policyPath, authz.Config{RecordUsage: true, Log: discard})
	if err != nil {
		t.Fatal(err)
	}
	return a, policyPath
}

// TestUsageForgetsLinesUnusedForLongerThanItKeeps: a line last used more
// than 400 days ago (removed from the policy, say) loses its last-use
// entry in Redis at the next day's flush, so the hash does not grow for
// ever; a line used since keeps its own.
func TestUsageForgetsLinesUnusedForLongerThanItKeeps(t *testing.T) {
	clock := testclock.New()
	modelPath, policyPath := policytest.Files(t, "p, alice, account:1, view_account", "p, bob, account:2, view_account")
	rdb := testredis.Client(t)
	a, err := authz.New(modelPath, policyPath, authz.Config{Now: clock.Now, RecordUsage: true, Log: discard})
	if err != nil {
		t.Fatal(err)
	}
	flush := func() {
		t.Helper()
		if err := a.FlushUsage(context.Background(), rdb); err != nil {
			t.Fatal(err)
		}
	}
	a.CanViewAccount(facade.Principal{ID: "alice"}, policytest.AccountID("1"))
	flush()
	clock.Advance(2 * 24 * time.Hour)
	a.CanViewAccount(facade.Principal{ID: "bob"}, policytest.AccountID("2"))
	flush()
	clock.Advance(399 * 24 * time.Hour) // alice's line 401 days ago, bob's 399
	flush()
	u, err := grantusage.ReadLastUse(context.Background(), rdb)
	if err != nil {
		t.Fatal(err)
	}
	if _, kept := u.Last["p, alice, account:1, view_account"]; kept {
		t.Errorf("a line last used 401 days ago keeps its last use: %v", u.Last)
	}
	if _, kept := u.Last["p, bob, account:2, view_account"]; !kept {
		t.Errorf("a line used 399 days ago lost its last use: %v", u.Last)
	}
}
