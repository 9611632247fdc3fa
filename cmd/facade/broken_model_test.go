package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
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
