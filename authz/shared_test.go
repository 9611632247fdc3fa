package authz

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/facade-dev/facade/authz/internal/policytest"
	"github.com/facade-dev/facade/internal/testkit/testlog"
	"github.com/facade-dev/facade/internal/testkit/testredis"
)

// TestAConfigMapUpdateIsReloaded: a Kubernetes ConfigMap volume updates
// its files by a symlink swap: the files are symlinks through ..data to a
// timestamped directory, and the kubelet writes a new directory, points
// ..data_tmp at it and renames ..data_tmp over ..data; the files' own
// links never change. The watch sees the swap (no poll within the test).
func TestAConfigMapUpdateIsReloaded(t *testing.T) {
	dir := t.TempDir()
	version := func(name, policy string) {
		t.Helper()
		d := filepath.Join(dir, name)
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		policytest.WriteFile(t, filepath.Join(d, "model.conf"), policytest.ShippedModel(t))
		policytest.WriteFile(t, filepath.Join(d, "policy.csv"), policy)
	}
	version("..2026_11_27_10_00_00.1", "p, alice, account:1001, view_account\n")
	mustSymlink(t, "..2026_11_27_10_00_00.1", filepath.Join(dir, "..data"))
	for _, f := range []string{"model.conf", "policy.csv"} {
		mustSymlink(t, filepath.Join("..data", f), filepath.Join(dir, f))
	}
	a, err := New(filepath.Join(dir, "model.conf"), filepath.Join(dir, "policy.csv"), Config{})
	if err != nil {
		t.Fatal(err)
	}
	a.force.debounce, a.force.pollEvery = 20*time.Millisecond, time.Hour
	watch(t, a, nil)
	time.Sleep(100 * time.Millisecond) // the first check, made at start, is done

	// The kubelet's update.
	version("..2026_11_27_10_05_00.2", "p, alice, account:1001, view_account\np, alice, account:2002, view_account\n")
	mustSymlink(t, "..2026_11_27_10_05_00.2", filepath.Join(dir, "..data_tmp"))
	if err := os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dir, "..2026_11_27_10_00_00.1")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the updated ConfigMap applies", func() bool { return a.CanViewAccount(alice, accountID("2002")) })
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// TestTheShrinkGuardHoldsAtStartUp: an instance starting on a policy with
// fewer than half of the lines of the last policy this Redis saw (one
// running beside it, or itself before a restart) refuses to start, saying
// how to accept it; FACADE_POLICY_ALLOW_SHRINK lets it start, and it then
// is the last policy seen. Before, the guard protected a running instance
// only: a second instance started on a 1-line policy beside a 32-line one.
func TestTheShrinkGuardHoldsAtStartUp(t *testing.T) {
	rdb := testredis.Client(t)
	ctx := context.Background()
	var long []string
	for i := range 10 {
		long = append(long, "p, alice, account:100"+string(rune('0'+i))+", view_account")
	}
	first, _ := newAuthorizer(t, long...)
	if err := first.GuardShared(ctx, rdb); err != nil {
		t.Fatalf("the first instance: %v", err)
	}
	short, policyPath := newAuthorizer(t, "p, alice, account:1001, view_account")
	err := short.GuardShared(ctx, rdb)
	if err == nil || !strings.Contains(err.Error(), policyPath+": the new policy removes 9 of 10 lines") ||
		!strings.Contains(err.Error(), "FACADE_POLICY_ALLOW_SHRINK=1") || !strings.Contains(err.Error(), first.Status().Hash) {
		t.Fatalf("a start on 1 line after 10: %v", err)
	}
	same, _ := newAuthorizer(t, long[:6]...) // 6 of 10: not more than half gone
	if err := same.GuardShared(ctx, rdb); err != nil {
		t.Fatalf("a start on 6 lines after 10: %v", err)
	}
	short.AllowShrink(true)
	if err := short.GuardShared(ctx, rdb); err != nil {
		t.Fatalf("with FACADE_POLICY_ALLOW_SHRINK: %v", err)
	}
	again, _ := newAuthorizer(t, "p, alice, account:1001, view_account", "p, bob, account:2002, view_account")
	if err := again.GuardShared(ctx, rdb); err != nil {
		t.Fatalf("after the accepted shrink, the last policy seen is the short one: %v", err)
	}
}

// TestInstancesRunningDifferentPoliciesAreAWarningAndAMetric: two
// instances on one Redis with different files: facade_policy_hashes is 2
// on each and each warns once, naming the hashes; once the files agree,
// the gauge is back to 1 and each says so.
func TestInstancesRunningDifferentPoliciesAreAWarningAndAMetric(t *testing.T) {
	rdb := testredis.Client(t)
	var logs testlog.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, nil))
	modelA, policyA := policytest.Files(t, "p, alice, account:1001, view_account")
	_, policyB := policytest.Files(t, "p, alice, account:1001, view_account", "p, bob, account:2002, view_account")
	a, err := New(modelA, policyA, Config{Log: log})
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(modelA, policyB, Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []*Authorizer{a, b} {
		x.force.debounce, x.force.beatEvery = 20*time.Millisecond, 50*time.Millisecond
		watch(t, x, rdb)
	}
	for name, x := range map[string]*Authorizer{"A": a, "B": b} {
		eventually(t, name+" sees two policies", func() bool { return policytest.CounterValue(x.metrics.PolicyHashes) == 2 })
	}
	eventually(t, "A warns", func() bool {
		return strings.Contains(logs.String(), "instances sharing this Redis run different policies")
	})
	if !strings.Contains(logs.String(), a.Status().Hash) || !strings.Contains(logs.String(), b.Status().Hash) {
		t.Errorf("the warning does not name both hashes:\n%s", logs.String())
	}
	policytest.ReplaceFile(t, policyA, "p, alice, account:1001, view_account\np, bob, account:2002, view_account\n")
	for name, x := range map[string]*Authorizer{"A": a, "B": b} {
		eventually(t, name+" sees one policy", func() bool { return policytest.CounterValue(x.metrics.PolicyHashes) == 1 })
	}
	eventually(t, "A says they agree", func() bool { return strings.Contains(logs.String(), "run the same policy again") })
	if n := strings.Count(logs.String(), "run different policies"); n != 1 {
		t.Errorf("%d warnings, want one:\n%s", n, logs.String())
	}
}
