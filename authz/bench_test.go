package authz

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/casbin/casbin/v2"

	facade "github.com/facade-dev/facade"
	"github.com/facade-dev/facade/authz/compiled"
	"github.com/facade-dev/facade/authz/internal/policytest"
)

// specSized generates the contract-sized policy in a temporary directory and
// loads it, timing the load.
func specSized(b *testing.B) (*policytest.Fixture, *Authorizer, time.Duration) {
	b.Helper()
	f := policytest.Generate(b, b.TempDir(), policytest.SpecScale)
	started := time.Now()
	a, err := New(f.ModelPath, f.PolicyPath, Config{Log: discardLogger()})
	if err != nil {
		b.Fatal(err)
	}
	return f, a, time.Since(started)
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// BenchmarkLoad reads, validates and builds the contract-sized policy.
func BenchmarkLoad(b *testing.B) {
	f, _, _ := specSized(b)
	b.Logf("policy: %d enrollment lines, %d permission lines, %d lines in all", f.Enrollments, f.Grants, len(f.Lines))
	var before, after runtime.MemStats
	var loading time.Duration
	for b.Loop() {
		runtime.GC()
		runtime.ReadMemStats(&before)
		started := time.Now()
		a, err := New(f.ModelPath, f.PolicyPath, Config{Log: discardLogger()})
		if err != nil {
			b.Fatal(err)
		}
		loading += time.Since(started)
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(a)
	}
	b.ReportMetric(float64(loading.Milliseconds())/float64(b.N), "ms/load")
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "MB-heap/policy")
}

// BenchmarkDecide measures single decisions on the contract-sized policy. The
// deny cases ask as a different, never-seen caller every time.
func BenchmarkDecide(b *testing.B) {
	f, a, took := specSized(b)
	b.Logf("load of the contract-sized policy took %v", took.Round(time.Millisecond))
	// Each case runs without usage recorded, then with it (usage.go), on
	// the same loaded policy in the same run: the ratio is the cost.
	st := a.force.state()
	counts := st.pol.NewUses()
	usage := []struct {
		name string
		use  *compiled.Uses
	}{{"", nil}, {"/usage-on", counts}}
	strangers := make([]string, 1<<18)
	for i := range strangers {
		strangers[i] = "intruder-" + strconv.Itoa(i)
	}
	// Professors asking about enrolled students of classes they do not teach.
	var notTeaching [][2]string
	for i, q := range f.Teaching {
		other := f.Teaching[(i+7)%len(f.Teaching)][1]
		if !a.CanViewGrade(facade.Principal{ID: q[0], Role: facade.RoleProfessor}, studentID(other)) {
			notTeaching = append(notTeaching, [2]string{q[0], other})
		}
	}
	rng := rand.New(rand.NewPCG(3, 5))
	cases := []struct {
		name  string
		allow bool
		ask   func(i int) bool
	}{
		{"account/allow", true, func(i int) bool {
			q := f.Accounts[i%len(f.Accounts)]
			return a.CanViewAccount(facade.Principal{ID: q[0]}, accountID(q[1]))
		}},
		{"account/deny-distinct-callers", false, func(i int) bool {
			return a.CanViewAccount(facade.Principal{ID: strangers[i%len(strangers)]}, accountID(strconv.Itoa(100000+i%3000)))
		}},
		{"transfer/allow", true, func(i int) bool {
			q := f.Accounts[i%len(f.Accounts)]
			return a.CanTransfer(facade.Principal{ID: q[0]}, accountID(q[1]), accountID(q[1]))
		}},
		{"grade-professor/allow", true, func(i int) bool {
			q := f.Teaching[i%len(f.Teaching)]
			return a.CanWriteGrade(facade.Principal{ID: q[0], Role: facade.RoleProfessor}, studentID(q[1]))
		}},
		{"grade-professor/deny-distinct-callers", false, func(i int) bool {
			return a.CanViewGrade(facade.Principal{ID: strangers[i%len(strangers)], Role: facade.RoleProfessor}, studentID("s"+strconv.Itoa(i%20000)))
		}},
		{"grade-professor/deny-not-teaching", false, func(i int) bool {
			q := notTeaching[i%len(notTeaching)]
			return a.CanViewGrade(facade.Principal{ID: q[0], Role: facade.RoleProfessor}, studentID(q[1]))
		}},
		{"plan-via-team/allow", true, func(i int) bool {
			q := f.Plans[i%len(f.Plans)]
			return a.CanViewPlan(facade.Principal{ID: q[0]}, planKey(q[1], q[2]))
		}},
		{"plan/deny-distinct-callers", false, func(i int) bool {
			q := f.Plans[i%len(f.Plans)]
			return a.CanViewPlan(facade.Principal{ID: strangers[i%len(strangers)]}, planKey(q[1], q[2]))
		}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			offset := rng.IntN(1 << 16)
			for i := 0; b.Loop(); i++ {
				if got := c.ask(offset + i); got != c.allow {
					b.Fatalf("decision %d = %v, want %v", i, got, c.allow)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/decision")
		})
	}
	// The same cases, usage off and on alternating in short rounds (each
	// round asks both the same questions, off first in one round and on
	// first in the next, since the second meets warm caches): usage-cost
	// is the median over those pairs of rounds of on over off, measured
	// within milliseconds of each other, so a neighbour's burst on a
	// shared machine lands in both or moves one pair of hundreds (1.03 is
	// the budget). ns/decision-off and -on are the fastest rounds.
	for _, c := range cases {
		b.Run("usage-cost/"+c.name, func(b *testing.B) {
			const rounds, per = 400, 1000
			best := [2]time.Duration{1 << 62, 1 << 62}
			var ratios []float64
			for b.Loop() {
				var took [2]time.Duration
				for r := range rounds {
					if r%2 == 0 {
						took = [2]time.Duration{}
					}
					for j := range usage {
						k := (j + r) % 2 // off first, then on first: the second of a round meets warm caches
						st.use = usage[k].use
						started := time.Now()
						for i := range per {
							if got := c.ask(r*per + i); got != c.allow {
								b.Fatalf("decision %d = %v, want %v", i, got, c.allow)
							}
						}
						round := time.Since(started)
						took[k] += round
						best[k] = min(best[k], round)
					}
					if r%2 == 1 {
						ratios = append(ratios, float64(took[1])/float64(took[0]))
					}
				}
			}
			st.use = nil
			slices.Sort(ratios)
			b.ReportMetric(float64(best[0].Nanoseconds())/per, "ns/decision-off")
			b.ReportMetric(float64(best[1].Nanoseconds())/per, "ns/decision-on")
			b.ReportMetric(ratios[len(ratios)/2], "usage-cost")
		})
	}
	for _, v := range usage {
		st.use = v.use
		b.Run("account/allow-parallel"+v.name, func(b *testing.B) {
			b.RunParallel(func(pb *testing.PB) {
				for i := 0; pb.Next(); i++ {
					q := f.Accounts[i%len(f.Accounts)]
					if !a.CanViewAccount(facade.Principal{ID: q[0]}, accountID(q[1])) {
						b.Error("deny")
						return
					}
				}
			})
		})
	}
}

// BenchmarkStockCasbin is the contrast: the same contract-sized question asked
// of casbin out of the box. "p-rows" is the textbook RBAC matcher over
// 10,000 p rows; "g-matcher" is this package's model with casbin's default
// role manager and Enforce, whose g() memo keeps every distinct question
// until the next policy change (heap-B/caller).
func BenchmarkStockCasbin(b *testing.B) {
	f := policytest.Generate(b, b.TempDir(), policytest.SpecScale)
	b.Run("stock-enforce/deny-distinct-callers", func(b *testing.B) {
		e, err := casbin.NewEnforcer(f.ModelPath, f.PolicyPath)
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; b.Loop(); i++ {
			if ok, _ := e.Enforce("intruder-"+strconv.Itoa(i), "account:100001", "view_account"); ok {
				b.Fatal("allow")
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/decision")
	})
	b.Run("g-matcher/deny-distinct-callers", func(b *testing.B) {
		e, err := casbin.NewEnforcer(f.ModelPath, f.PolicyPath)
		if err != nil {
			b.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for i := 0; b.Loop(); i++ {
			if ok, _ := e.Enforce("intruder-"+strconv.Itoa(i), "account:100001", "view_account"); ok {
				b.Fatal("allow")
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/decision")
		b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/float64(b.N), "heap-B/caller")
		runtime.KeepAlive(e)
	})
}

// TestHeapStaysBoundedForDistinctDeniedCallers: 10,000 callers that were
// never seen before ask every kind of question and are all denied. The
// Authorizer keeps nothing per question, so the live heap must not grow with
// them. (Stock casbin Enforce would keep each question in its g() memo:
// see BenchmarkStockCasbin.)
func TestHeapStaysBoundedForDistinctDeniedCallers(t *testing.T) {
	f := policytest.Generate(t, t.TempDir(), policytest.Scale{
		Students: 2000, ClassesPerStudent: 5, Classes: 200, Professors: 100,
		AccountHolders: 300, Teams: 40, Depts: 4, PlanGrants: 300, ProjectGrants: 100,
	})
	a, err := New(f.ModelPath, f.PolicyPath, Config{Log: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	ask := func(i int) (allowed bool) {
		id := "intruder-" + strconv.Itoa(i)
		student := "s" + strconv.Itoa(i%2000)
		account := strconv.Itoa(100000 + i%300)
		prof := facade.Principal{ID: id, Role: facade.RoleProfessor}
		anyone := facade.Principal{ID: id, Role: "developer"}
		return a.CanViewGrade(prof, studentID(student)) || a.CanWriteGrade(prof, studentID(student)) ||
			a.CanViewAccount(anyone, accountID(account)) || a.CanTransfer(anyone, accountID(account), accountID("100000")) ||
			a.CanViewProject(anyone, projectKey("PRJ"+strconv.Itoa(i%600))) || a.CanViewPlan(anyone, planKey("PRJ"+strconv.Itoa(i%600), "P1"))
	}
	ask(-1) // warm up lazily created metric children and pools
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range 10000 {
		if ask(i) {
			t.Fatalf("caller %d was allowed", i)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	growth := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("live heap growth after 10,000 distinct denied callers x 6 questions: %d bytes", growth)
	if growth > 256<<10 {
		t.Fatalf("live heap grew by %d bytes: something keeps per-caller state", growth)
	}
	runtime.KeepAlive(a)
}

// BenchmarkDecideMembersWithWildcardsAndDeny is the load ops teams run:
// the deny model, 100,000 enrollments, 10,000 grants of which 1,000 are
// wildcards and 200 deny rules, and principals who ARE in the policy,
// each a member of 1 to 20 teams (teams nested in departments). It
// prints p50 and p99 of single decisions, allowed and denied apart, and
// the load time of that policy (a reload costs the same).
func BenchmarkDecideMembersWithWildcardsAndDeny(b *testing.B) {
	dir := b.TempDir()
	modelPath, policyPath := filepath.Join(dir, "model.conf"), filepath.Join(dir, "policy.csv")
	policytest.WriteFile(b, modelPath, policytest.Families["deny-keymatch"])
	rng := rand.New(rand.NewPCG(11, 13))
	const users, teams, depts, projects = 5000, 500, 50, 400
	var lines []string
	for s := range 100_000 { // enrollments
		lines = append(lines, fmt.Sprintf("g, student:s%d, class:c%d", s, s%2000))
	}
	for u := range users { // memberships: 1 to 20 teams each
		for range 1 + rng.IntN(20) {
			lines = append(lines, fmt.Sprintf("g, u%d, team:t%d", u, rng.IntN(teams)))
		}
	}
	for t := range teams {
		lines = append(lines, fmt.Sprintf("g, team:t%d, dept:d%d", t, t%depts))
	}
	grants := 0
	grant := func(format string, args ...any) { lines = append(lines, fmt.Sprintf(format, args...)); grants++ }
	for range 1000 { // wildcards
		grant("p, team:t%d, project:PRJ%d*, view, allow", rng.IntN(teams), rng.IntN(projects))
	}
	for range 200 { // deny rules on members
		grant("p, u%d, project:PRJ%d, view, deny", rng.IntN(users), rng.IntN(projects))
	}
	for grants < 10_000 {
		switch rng.IntN(3) {
		case 0:
			grant("p, team:t%d, project:PRJ%d, view, allow", rng.IntN(teams), rng.IntN(projects))
		case 1:
			grant("p, dept:d%d, class:c%d, view, allow", rng.IntN(depts), rng.IntN(2000))
		default:
			grant("p, u%d, account:a%d, view_account, allow", rng.IntN(users), rng.IntN(20000))
		}
	}
	policytest.WriteFile(b, policyPath, strings.Join(lines, "\n")+"\n")
	started := time.Now()
	a, err := New(modelPath, policyPath, Config{Log: discardLogger()})
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%d lines (%d grants); load %v, decided by %s", len(lines), grants, time.Since(started).Round(time.Millisecond), a.Status().Decider)

	type question struct{ sub, obj, act string }
	qs := make([]question, 1<<16)
	for i := range qs {
		sub := fmt.Sprintf("u%d", rng.IntN(users))
		switch rng.IntN(3) {
		case 0:
			qs[i] = question{sub, fmt.Sprintf("project:PRJ%d", rng.IntN(projects)), "view"}
		case 1:
			qs[i] = question{sub, fmt.Sprintf("student:s%d", rng.IntN(100_000)), "view"}
		default:
			qs[i] = question{sub, fmt.Sprintf("account:a%d", rng.IntN(20000)), "view_account"}
		}
	}
	var allowed, denied []time.Duration
	for i := 0; b.Loop(); i++ {
		q := qs[i%len(qs)]
		t0 := time.Now()
		ok := a.force.state().enforce(compiled.Subject{ID: q.sub}, q.obj, q.act)
		took := time.Since(t0)
		if ok {
			allowed = append(allowed, took)
		} else {
			denied = append(denied, took)
		}
	}
	reportPercentiles(b, "allowed", allowed)
	reportPercentiles(b, "denied", denied)
}

// BenchmarkDecideCasbinPath is the figure for models that fall to casbin:
// the contract-sized policy (100,000 enrollments, 10,000 grants) under
// rootModel, single decisions through the Authorizer, p50 and p99 of
// allowed and denied questions apart.
func BenchmarkDecideCasbinPath(b *testing.B) {
	f := policytest.Generate(b, b.TempDir(), policytest.SpecScale)
	policytest.WriteFile(b, f.ModelPath, policytest.RootModel(b))
	started := time.Now()
	a, err := New(f.ModelPath, f.PolicyPath, Config{Log: discardLogger()})
	if err != nil {
		b.Fatal(err)
	}
	if d := a.Status().Decider; d != compiled.DeciderCasbin {
		b.Fatalf("decided by %s, want casbin", d)
	}
	b.Logf("load %v, decided by casbin", time.Since(started).Round(time.Millisecond))
	var allowed, denied []time.Duration
	for i := 0; b.Loop(); i++ {
		q := f.Accounts[i%len(f.Accounts)]
		p := facade.Principal{ID: q[0]}
		if i%2 == 1 {
			p.ID = "intruder-" + strconv.Itoa(i)
		}
		t0 := time.Now()
		ok := a.CanViewAccount(p, accountID(q[1]))
		took := time.Since(t0)
		if ok != (i%2 == 0) {
			b.Fatalf("decision %d = %v", i, ok)
		}
		if ok {
			allowed = append(allowed, took)
		} else {
			denied = append(denied, took)
		}
	}
	reportPercentiles(b, "allowed", allowed)
	reportPercentiles(b, "denied", denied)
}

// reportPercentiles logs p50 and p99 of ds and reports p99 as a metric.
func reportPercentiles(b *testing.B, name string, ds []time.Duration) {
	if len(ds) == 0 {
		return
	}
	slices.Sort(ds)
	p50, p99 := ds[len(ds)/2], ds[len(ds)*99/100]
	b.ReportMetric(float64(p99.Nanoseconds()), "p99-ns-"+name)
	b.Logf("%s: %d decisions, p50 %v, p99 %v", name, len(ds), p50, p99)
}
