package authz

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/facade-dev/facade/authz/internal/policytest"
	"github.com/facade-dev/facade/internal/testkit/testlog"
)

// An empty policy, or one that removes more than half of the lines, is far
// more often a truncated copy than an intent: refused unless allowed.
func TestReloadRefusesAnEmptyOrHalvedPolicy(t *testing.T) {
	lines := []string{
		"p, alice, account:1001, view_account",
		"p, alice, account:1001, transfer",
		"p, bob, account:2002, view_account",
		"g, carol, team:platform",
		"p, team:platform, project:PROJ, view",
	}
	modelPath, policyPath := policytest.Files(t, lines...)
	logs := &testlog.Buffer{}
	a, err := New(modelPath, policyPath, Config{Log: slog.New(slog.NewJSONHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	hash := a.Status().Hash
	refusals := 0
	for name, text := range map[string]string{
		"empty":       "",
		"comments":    "# nothing here\n",
		"halved":      lines[0] + "\n" + lines[1] + "\n",
		"one of five": lines[4] + "\n",
	} {
		// Each refusal is logged once, naming the way out.
		policytest.ReplaceFile(t, policyPath, text)
		err := a.Reload()
		if err == nil || !strings.Contains(err.Error(), "FACADE_POLICY_ALLOW_SHRINK") {
			t.Fatalf("%s: Reload error = %v, want a refusal naming FACADE_POLICY_ALLOW_SHRINK", name, err)
		}
		st := a.Status()
		if !st.Loaded || st.LastReloadOK || st.Hash != hash || st.Rules != 5 || policytest.CounterValue(a.metrics.PolicyLastReloadOK) != 0 {
			t.Fatalf("%s: status %+v after a refused shrink, want the old policy (hash %s) in force", name, st, hash)
		}
		if !a.CanViewAccount(alice, accountID("1001")) || !a.CanViewProject(carol, projectKey("PROJ")) {
			t.Fatalf("%s: the last good policy no longer decides", name)
		}
		if n := strings.Count(logs.String(), "set FACADE_POLICY_ALLOW_SHRINK=1 to accept it"); n != refusals+1 {
			t.Fatalf("%s: %d refusal log lines, want %d:\n%s", name, n, refusals+1, logs)
		}
		refusals++
	}
	// Three of five lines stay: not more than half removed.
	policytest.ReplaceFile(t, policyPath, strings.Join(lines[2:], "\n")+"\n")
	if err := a.Reload(); err != nil {
		t.Fatalf("a 2-of-5 removal was refused: %v", err)
	}
	if a.CanViewAccount(alice, accountID("1001")) || a.Status().Hash == hash {
		t.Fatal("the smaller policy is not in force")
	}
	a.AllowShrink(true)
	policytest.ReplaceFile(t, policyPath, "")
	if err := a.Reload(); err != nil || a.Status().Rules != 0 || a.CanViewProject(carol, projectKey("PROJ")) {
		t.Fatalf("with the guard lifted, an empty policy must load: err %v, status %+v", err, a.Status())
	}
}

// The same files give the same hash on every instance; the metric carries
// it with the decider.
func TestPolicyHashIsTheSameForTheSameFiles(t *testing.T) {
	a, _ := newAuthorizer(t, "p, alice, account:1001, view_account")
	b, _ := newAuthorizer(t, "p, alice, account:1001, view_account")
	c, _ := newAuthorizer(t, "p, alice, account:1002, view_account")
	if a.Status().Hash != b.Status().Hash || a.Status().Hash == c.Status().Hash {
		t.Fatalf("hashes %s %s %s: same files must agree, different files differ", a.Status().Hash, b.Status().Hash, c.Status().Hash)
	}
	if v := policytest.CounterValue(c.metrics.PolicyInfo.WithLabelValues(c.Status().Hash, "index")); v != 1 {
		t.Fatalf("facade_policy_info{hash=%s,decider=index} = %v, want 1", c.Status().Hash, v)
	}
}
