package authz

import (
	"testing"
	"time"

	"github.com/facade-dev/facade/authz/internal/policytest"
	"github.com/facade-dev/facade/internal/testkit/testclock"
	"github.com/facade-dev/facade/metrics"
)

// TestLoadAndReloadTimesComeFromTheGivenClock: Status.LoadedAt and the
// loaded-at metric read the clock given in Config.Now, on load and on every
// reload that brings in a new policy (and not on one that finds nothing new).
func TestLoadAndReloadTimesComeFromTheGivenClock(t *testing.T) {
	clock := testclock.New()
	m := metrics.New()
	modelPath, policyPath := policytest.Files(t, "p, alice, account:1001, view_account")
	a, err := New(modelPath, policyPath, Config{Now: clock.Now, Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	loaded := clock.Now()
	if got := a.Status().LoadedAt; !got.Equal(loaded) {
		t.Fatalf("LoadedAt %v, want the clock's %v", got, loaded)
	}
	clock.Advance(time.Hour)
	if err := a.Reload(); err != nil || !a.Status().LoadedAt.Equal(loaded) {
		t.Fatalf("a reload of unchanged files moved LoadedAt to %v (err %v)", a.Status().LoadedAt, err)
	}
	policytest.ReplaceFile(t, policyPath, "p, alice, account:1001, view_account\np, alice, account:2002, view_account\n")
	if err := a.Reload(); err != nil {
		t.Fatal(err)
	}
	if got := a.Status().LoadedAt; !got.Equal(clock.Now()) {
		t.Fatalf("LoadedAt after a reload %v, want the clock's %v", got, clock.Now())
	}
	if got := policytest.CounterValue(m.PolicyLoadedTimestamp); got != float64(clock.Now().Unix()) {
		t.Fatalf("loaded-at metric %v, want %d", got, clock.Now().Unix())
	}
}
