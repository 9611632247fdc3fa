package authz

import (
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	facade "github.com/facade-dev/facade"
)

// TestCasbinPathHeapStaysBoundedForDistinctCallers: on casbin's own path
// (a model the index does not decide), 2 x 4096 callers never seen before,
// each carrying a token group of its own, are all denied, and the live heap
// stays bounded: casbin's g() memo and the role names its role manager
// creates for token groups are dropped every 4096 questions (forgetEvery),
// so a stream of distinct callers cannot grow the heap for ever.
func TestCasbinPathHeapStaysBoundedForDistinctCallers(t *testing.T) {
	dir := t.TempDir()
	modelPath, policyPath := filepath.Join(dir, "model.conf"), filepath.Join(dir, "policy.csv")
	writeFile(t, modelPath, abacModel)
	writeFile(t, policyPath, "p, team:x, account:1001, view_account\ng, alice, team:x\n")
	a, err := New(modelPath, policyPath, Config{Log: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	round := func(r int) {
		for i := range forgetEvery {
			id := "intruder-" + strconv.Itoa(r) + "-" + strconv.Itoa(i)
			if a.CanViewAccount(facade.Principal{ID: id, Groups: []string{id}}, accountID("2002-"+id)) {
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
	runtime.KeepAlive(a)
}
