package compiled

import (
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/facade-dev/facade/authz/internal/policytest"
)

// casbinPath compiles policytest.AbacModel and AbacLines: casbin decides.
func casbinPath(t *testing.T) *Policy {
	t.Helper()
	p, problems := compileTexts(policytest.AbacModel, strings.Join(policytest.AbacLines, "\n")+"\n")
	if p == nil || p.Decider() != DeciderCasbin {
		t.Fatalf("the ABAC model: %v", problems)
	}
	return p
}

// TestCasbinPathHeapStaysBoundedForDistinctCallers: on casbin's own path
// (a model the index does not decide), 2 x 4096 callers never seen before,
// each carrying a token group of its own, are all denied, and the live heap
// stays bounded: casbin's g() memo and the role names its role manager
// creates for token groups are dropped every 4096 questions (forgetEvery),
// so a stream of distinct callers cannot grow the heap for ever.
func TestCasbinPathHeapStaysBoundedForDistinctCallers(t *testing.T) {
	p := casbinPath(t)
	round := func(r int) {
		for i := range forgetEvery {
			id := "intruder-" + strconv.Itoa(r) + "-" + strconv.Itoa(i)
			if p.Enforce(SubjectWith(id, []string{id}), "account:2002-"+id, "view_account") {
				t.Fatalf("%s was allowed", id)
			}
		}
	}
	round(0) // the first round fills the memo up to its bound
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	round(1)
	runtime.GC()
	runtime.ReadMemStats(&after)
	growth := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("live heap growth over %d more distinct callers with a group each: %d bytes", forgetEvery, growth)
	if growth > 1<<20 {
		t.Fatalf("live heap grew by %d bytes over %d callers: casbin's memo or role names are kept", growth, forgetEvery)
	}
	runtime.KeepAlive(p)
}

// TestCasbinPathDecidesPastItsMemoBound: many distinct callers do not keep
// casbin's g() memo growing: it is dropped every forgetEvery decisions,
// and the decisions after a drop are the same (checked by running past
// it).
func TestCasbinPathDecidesPastItsMemoBound(t *testing.T) {
	p := casbinPath(t)
	for i := range 2 * forgetEvery {
		if p.Enforce(Subject{ID: "caller-" + strings.Repeat("x", i%7) + string(rune('a'+i%26))}, "account:1001", "view_account") {
			t.Fatal("a stranger was allowed")
		}
	}
	if !p.Enforce(Subject{ID: "alice"}, "account:1001", "view_account") {
		t.Fatal("alice was denied after the memo was dropped")
	}
}
