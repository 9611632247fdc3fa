package authz

import (
	"testing"

	"github.com/casbin/casbin/v2"

	"github.com/facade-dev/facade/authz/compiled"
	"github.com/facade-dev/facade/authz/internal/policytest"
)

// TestAnUnrecognizedModelIsDecidedByCasbinAndReported: a model the index
// does not decide (policytest.AbacModel) is decided by casbin's own
// Enforce, as stock casbin decides it, and the service says so (/readyz,
// the metric). Package compiled checks that casbin's memo stays bounded,
// package policytool what `policy check` and `explain` say.
func TestAnUnrecognizedModelIsDecidedByCasbinAndReported(t *testing.T) {
	modelPath, policyPath := policytest.ModelFiles(t, policytest.AbacModel, policytest.AbacLines...)
	a, err := New(modelPath, policyPath, Config{Log: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	st := a.Status()
	if st.Decider != compiled.DeciderCasbin {
		t.Fatalf("decider %q, want casbin", st.Decider)
	}
	if v := policytest.CounterValue(a.metrics.PolicyInfo.WithLabelValues(st.Hash, compiled.DeciderCasbin)); v != 1 {
		t.Fatalf("facade_policy_info{decider=casbin} = %v, want 1", v)
	}
	stock, err := casbin.NewEnforcer(modelPath, policyPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []struct {
		sub, account string
		want         bool
	}{{"alice", "1001", true}, {"bob", "1001", false}, {"bob", "bob-own", true}, {"alice", "bob-own", false}} {
		got := a.CanViewAccount(facadePrincipal(q.sub, ""), accountID(q.account))
		want, _ := stock.Enforce(q.sub, "account:"+q.account, "view_account")
		if got != q.want || want != q.want {
			t.Errorf("(%s, account:%s): service %v, stock casbin %v, want %v", q.sub, q.account, got, want, q.want)
		}
	}
}
