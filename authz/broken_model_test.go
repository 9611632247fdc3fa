package authz

import (
	"strconv"
	"strings"
	"testing"

	"github.com/facade-dev/facade/authz/internal/policytest"
)

// TestABrokenMatcherIsRefusedAtReloadAndAtStart: a model.conf whose
// matcher casbin cannot parse (a stray &&) or cannot evaluate (a function
// given one argument too few) is a broken file like a broken policy line:
// a reload keeps the last good policy, says so in Status and the
// facade_policy_last_reload_ok gauge, and a start refuses it naming the
// matcher's line. Before, it was a warning: reloaded and started, every
// decision denied.
func TestABrokenMatcherIsRefusedAtReloadAndAtStart(t *testing.T) {
	shipped := policytest.ShippedModel(t)
	for name, broken := range map[string]string{
		"a stray &&":             strings.Replace(shipped, "&& r.act == p.act", "&& r.act == p.act &&", 1),
		"a call casbin fails on": strings.Replace(shipped, "m = ", "m = keyMatch2(r.obj) || ", 1),
	} {
		t.Run(name, func(t *testing.T) {
			if broken == shipped {
				t.Fatal("the shipped model has no line to change")
			}
			line := 0
			for i, l := range strings.Split(broken, "\n") {
				if strings.HasPrefix(l, "m = ") {
					line = i + 1
				}
			}
			modelPath, policyPath := policytest.ModelFiles(t, shipped, "p, alice, account:1001, view_account")
			a, err := New(modelPath, policyPath, Config{})
			if err != nil {
				t.Fatal(err)
			}
			policytest.ReplaceFile(t, modelPath, broken)
			err = a.Reload()
			if err == nil || !strings.Contains(err.Error(), modelPath+":"+strconv.Itoa(line)+": ") {
				t.Fatalf("Reload: %v, want a refusal naming %s:%d", err, modelPath, line)
			}
			if !a.CanViewAccount(alice, accountID("1001")) {
				t.Fatal("the last good policy is no longer in force")
			}
			if st := a.Status(); !st.Loaded || st.LastReloadOK || st.LastError == "" || st.Version != 1 {
				t.Fatalf("status after the refused reload: %+v", st)
			}
			if v := policytest.CounterValue(a.metrics.PolicyLastReloadOK); v != 0 {
				t.Fatalf("facade_policy_last_reload_ok = %v, want 0", v)
			}
			if _, err := New(modelPath, policyPath, Config{}); err == nil || !strings.Contains(err.Error(), modelPath+":"+strconv.Itoa(line)+": ") {
				t.Fatalf("a start on the broken model: %v, want a refusal naming %s:%d", err, modelPath, line)
			}
		})
	}
}
