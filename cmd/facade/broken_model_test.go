package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/facade-dev/facade/authz"
	"github.com/facade-dev/facade/internal/testkit/testredis"
)

// TestPolicyCheckRefusesABrokenMatcher: `facade policy check` on a model
// whose matcher ends in a stray && exits 1 with the matcher's file:line,
// and prints no "ok:" (it used to warn, print ok and exit 0, so a CI gate
// let the outage through); serve refuses to start on it, naming the line.
func TestPolicyCheckRefusesABrokenMatcher(t *testing.T) {
	shipped, err := os.ReadFile("../../model.conf")
	if err != nil {
		t.Fatal(err)
	}
	broken := strings.Replace(string(shipped), "&& r.act == p.act", "&& r.act == p.act &&", 1)
	line := 0
	for i, l := range strings.Split(broken, "\n") {
		if strings.HasPrefix(l, "m = ") {
			line = i + 1
		}
	}
	model := filepath.Join(t.TempDir(), "model.conf")
	if err := os.WriteFile(model, []byte(broken), 0o600); err != nil {
		t.Fatal(err)
	}
	at := model + ":" + strconv.Itoa(line) + ": "
	code, out, stderr := runCmd(settingsFrom(nil), "policy", "check", "--model", model, "--policy", "../../policy.csv")
	if code != 1 || !strings.Contains(out, at) || strings.Contains(out, "ok:") {
		t.Fatalf("policy check: exit %d, stdout %q, stderr %q; want exit 1 naming %s and no ok", code, out, stderr, at)
	}
	code, _, stderr = runCmd(settingsFrom(map[string]string{"FACADE_MODEL": model, "FACADE_POLICY": "../../policy.csv",
		"FACADE_REDIS_URL": "redis://127.0.0.1:1", "FACADE_JWT_SECRET": secret}), "serve")
	if code == 0 || !strings.Contains(stderr, at) {
		t.Fatalf("serve on the broken model: exit %d, stderr %q; want a refusal naming %s", code, stderr, at)
	}
}

// TestServeRefusesToShrinkThePolicyThisRedisSaw: serve started on a policy
// of fewer than half of the lines of the last policy its Redis saw (an
// instance running the repository's policy) stops with one line naming
// FACADE_POLICY and the override (authz's TestTheShrinkGuardHoldsAtStartUp
// shows the override).
func TestServeRefusesToShrinkThePolicyThisRedisSaw(t *testing.T) {
	srv := testredis.Start(t, testredis.Options{})
	running, err := authz.New("../../model.conf", "../../policy.csv", authz.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := running.GuardShared(context.Background(), srv.Client(t)); err != nil {
		t.Fatal(err)
	}
	short := filepath.Join(t.TempDir(), "policy.csv")
	if err := os.WriteFile(short, []byte("p, alice, account:1001, view_account\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"FACADE_MODEL": "../../model.conf", "FACADE_POLICY": short,
		"FACADE_REDIS_URL": "redis://" + srv.Addr, "FACADE_JWT_SECRET": secret, "FACADE_ADDR": "127.0.0.1:0"}
	code, _, stderr := runCmd(settingsFrom(env), "serve")
	if code == 0 || !strings.Contains(stderr, "FACADE_POLICY") || !strings.Contains(stderr, "the last policy this Redis saw") ||
		!strings.Contains(stderr, "FACADE_POLICY_ALLOW_SHRINK=1") {
		t.Fatalf("serve on a 1-line policy after the repository's: exit %d, stderr %q", code, stderr)
	}
}
