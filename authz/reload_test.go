package authz

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	facade "github.com/facade-dev/facade"
	"github.com/facade-dev/facade/authz/internal/policytest"
	"github.com/facade-dev/facade/internal/testkit/testredis"
)

var (
	alice = facade.Principal{ID: "alice"}
	carol = facade.Principal{ID: "carol", Role: "developer"}
)

func TestReloadBringsInAnEditedPolicy(t *testing.T) {
	a, policyPath := newAuthorizer(t, "p, alice, account:1001, view_account")
	if a.CanViewAccount(alice, accountID("2002")) {
		t.Fatal("allowed before the grant exists")
	}
	policytest.ReplaceFile(t, policyPath, "p, alice, account:1001, view_account\np, alice, account:2002, view_account\n")
	if err := a.Reload(); err != nil {
		t.Fatal(err)
	}
	if !a.CanViewAccount(alice, accountID("2002")) {
		t.Fatal("the new grant is not in effect after Reload")
	}
	if st := a.Status(); !st.Loaded || !st.LastReloadOK || st.Version != 2 || st.Rules != 2 || st.Decider != "index" || len(st.Hash) != 16 {
		t.Fatalf("status = %+v", st)
	}
	if err := a.Reload(); err != nil || a.Version() != 2 {
		t.Fatalf("reload of unchanged files: err %v, version %d, want nil and 2", err, a.Version())
	}
}

func TestReloadRefusesABrokenFileAndKeepsTheLastGoodPolicy(t *testing.T) {
	a, policyPath := newAuthorizer(t, "p, alice, account:1001, view_account")
	errors := a.metrics.PolicyReloads.WithLabelValues("error")
	errorsBefore := policytest.CounterValue(errors)

	policytest.WriteFile(t, policyPath, "p, alice, account:1001, view_account\np, alice, account:2002, view_acount\n")
	err := a.Reload()
	if err == nil || !strings.Contains(err.Error(), policyPath+":2: ") {
		t.Fatalf("Reload error = %v, want one naming %s:2", err, policyPath)
	}
	if !a.CanViewAccount(alice, accountID("1001")) {
		t.Fatal("the last good policy is no longer in force")
	}
	st := a.Status()
	if !st.Loaded || st.LastReloadOK || st.LastError == "" || st.Version != 1 || st.Rules != 1 {
		t.Fatalf("status after a refused reload = %+v", st)
	}
	if strings.Contains(st.LastError, policyPath) || strings.Contains(st.LastError, "acount") {
		t.Fatalf("status leaks file details: %q", st.LastError)
	}
	if policytest.CounterValue(a.metrics.PolicyLastReloadOK) != 0 || policytest.CounterValue(errors) != errorsBefore+1 {
		t.Fatalf("metrics: last_reload_ok %v, errors +%v; want 0 and +1",
			policytest.CounterValue(a.metrics.PolicyLastReloadOK), policytest.CounterValue(errors)-errorsBefore)
	}
	if a.Reload() == nil || policytest.CounterValue(errors) != errorsBefore+1 {
		t.Fatal("the same broken file must be refused again but reported once")
	}

	policytest.WriteFile(t, policyPath, "p, alice, account:1001, view_account\np, alice, account:2002, view_account\n")
	if err := a.Reload(); err != nil {
		t.Fatal(err)
	}
	if st := a.Status(); !st.LastReloadOK || st.LastError != "" || st.Version != 2 || !a.CanViewAccount(alice, accountID("2002")) {
		t.Fatalf("after fixing the file: status %+v", st)
	}
	if policytest.CounterValue(a.metrics.PolicyLastReloadOK) != 1 {
		t.Fatal("last_reload_ok gauge not back to 1")
	}
}

func TestReloadTakesRemovedRulesAway(t *testing.T) {
	a, policyPath := newAuthorizer(t,
		"p, alice, account:1001, view_account",
		"g, carol, team:platform",
		"p, team:platform, project:PROJ, view",
		"p, dave, account:3003, view_account")
	if !a.CanViewAccount(alice, accountID("1001")) || !a.CanViewProject(carol, projectKey("PROJ")) {
		t.Fatal("grants not in effect")
	}
	// grant and membership gone (half of the lines: the shrink guard lets it through)
	policytest.ReplaceFile(t, policyPath, "p, team:platform, project:PROJ, view\np, dave, account:3003, view_account\n")
	if err := a.Reload(); err != nil {
		t.Fatal(err)
	}
	if a.CanViewAccount(alice, accountID("1001")) {
		t.Error("a removed grant still allows")
	}
	if a.CanViewProject(carol, projectKey("PROJ")) {
		t.Error("a removed membership still allows")
	}
}

func TestReloadRefusesAnUnreadableFile(t *testing.T) {
	a, policyPath := newAuthorizer(t, "p, alice, account:1001, view_account")
	if err := os.Remove(policyPath); err != nil {
		t.Fatal(err)
	}
	if a.Reload() == nil {
		t.Fatal("Reload accepted a missing file")
	}
	if st := a.Status(); st.LastReloadOK || !a.CanViewAccount(alice, accountID("1001")) {
		t.Fatalf("status %+v; the last good policy must stay", st)
	}
}

// watch runs a.Watch until the test ends and checks that it returns nil.
func watch(t *testing.T, a *Authorizer, rdb redis.UniversalClient) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Watch(ctx, rdb) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Watch returned %v when its context ended", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("Watch did not return after its context ended")
		}
	})
}

func TestWatchFollowsFileEdits(t *testing.T) {
	a, policyPath := newAuthorizer(t, "p, alice, account:1001, view_account")
	a.force.debounce = 20 * time.Millisecond
	watch(t, a, nil)

	// An editor's save: write a temp file, rename it over the old one.
	policytest.ReplaceFile(t, policyPath, "p, alice, account:1001, view_account\np, alice, account:2002, view_account\n")
	eventually(t, "the renamed-in grant applies", func() bool { return a.CanViewAccount(alice, accountID("2002")) })

	// An in-place write that removes a grant.
	policytest.WriteFile(t, policyPath, "p, alice, account:2002, view_account\n")
	eventually(t, "the removed grant stops applying", func() bool { return !a.CanViewAccount(alice, accountID("1001")) })

	// A broken save is refused; the last good policy stays.
	policytest.ReplaceFile(t, policyPath, "p, alice, account:2002\n")
	eventually(t, "the broken file is refused", func() bool { return !a.Status().LastReloadOK })
	if !a.CanViewAccount(alice, accountID("2002")) {
		t.Fatal("the last good policy was dropped")
	}

	// Fixed again, and a model edit is noticed too.
	policytest.ReplaceFile(t, policyPath, "p, alice, account:3003, view_account\n")
	eventually(t, "the fixed file applies", func() bool { return a.CanViewAccount(alice, accountID("3003")) })
	modelPath := filepath.Join(filepath.Dir(policyPath), "model.conf")
	policytest.ReplaceFile(t, modelPath, strings.Replace(policytest.ShippedModel(t), "[policy_effect]", "", 1))
	eventually(t, "the broken model is refused", func() bool { return !a.Status().LastReloadOK })
	if !a.CanViewAccount(alice, accountID("3003")) {
		t.Fatal("a broken model dropped the policy")
	}
}

// Two instances share a policy volume that delivers no file events to the
// second one (modelled by a symlink: B's directory never changes). Only the
// first instance sees the edit; Pub/Sub must carry it to the second.
func TestPubSubCarriesAReloadToAnotherInstance(t *testing.T) {
	rdb := testredis.Client(t)
	sharedModel, sharedPolicy := policytest.Files(t, "p, alice, account:1001, view_account")
	a, err := New(sharedModel, sharedPolicy, Config{})
	if err != nil {
		t.Fatal(err)
	}
	dirB := t.TempDir()
	modelB, policyB := filepath.Join(dirB, "model.conf"), filepath.Join(dirB, "policy.csv")
	policytest.WriteFile(t, modelB, policytest.ShippedModel(t))
	if err := os.Symlink(sharedPolicy, policyB); err != nil {
		t.Fatal(err)
	}
	b, err := New(modelB, policyB, Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []*Authorizer{a, b} {
		x.force.debounce, x.force.pollEvery = 20*time.Millisecond, time.Hour // no poll within the test
		watch(t, x, rdb)
	}
	eventually(t, "both instances subscribe", func() bool {
		n, err := rdb.PubSubNumSub(context.Background(), reloadChannel).Result()
		return err == nil && n[reloadChannel] == 2
	})

	policytest.ReplaceFile(t, sharedPolicy, "p, alice, account:1001, view_account\np, alice, account:2002, view_account\n")
	eventually(t, "instance A applies its edit", func() bool { return a.CanViewAccount(alice, accountID("2002")) })
	eventually(t, "instance B applies it through Pub/Sub", func() bool { return b.CanViewAccount(alice, accountID("2002")) })
	if b.Version() != 2 {
		t.Errorf("B version = %d, want 2", b.Version())
	}
}
