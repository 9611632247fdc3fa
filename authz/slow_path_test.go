package authz

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/casbin/casbin/v2"
)

// abacModel is valid casbin the index does not decide: a condition on the
// object's text (accounts whose id starts with the principal's name) next
// to ordinary grants. casbin's own Enforce must decide it, and say so.
const abacModel = `[request_definition]
r = sub, obj, act

[policy_definition]
p = sub, obj, act

[role_definition]
g = _, _

[policy_effect]
e = some(where (p.eft == allow))

[matchers]
m = (g(r.sub, p.sub) && r.obj == p.obj && r.act == p.act) || (r.act == "view_account" && r.obj == "account:" + r.sub + "-own")
`

func TestAnUnrecognizedModelIsDecidedByCasbinAndReported(t *testing.T) {
	dir := t.TempDir()
	modelPath, policyPath := filepath.Join(dir, "model.conf"), filepath.Join(dir, "policy.csv")
	writeFile(t, modelPath, abacModel)
	writeFile(t, policyPath, "p, team:x, account:1001, view_account\ng, alice, team:x\n")
	a, err := New(modelPath, policyPath, Config{Log: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	st := a.Status()
	if st.Decider != deciderCasbin {
		t.Fatalf("decider %q, want casbin", st.Decider)
	}
	if v := counterValue(a.metrics.PolicyInfo.WithLabelValues(st.Hash, deciderCasbin)); v != 1 {
		t.Fatalf("facade_policy_info{decider=casbin} = %v, want 1", v)
	}
	p, err := Open(modelPath, policyPath)
	if err != nil || p.Decider() != deciderCasbin || !strings.Contains(p.Family(), "not one the index decides (it uses modifier +)") {
		t.Fatalf("Open: %v, decider %q, family %q", err, p.Decider(), p.Family())
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
	// Many distinct callers do not keep casbin's g() memo growing: it is
	// dropped every forgetEvery decisions (checked by running past it).
	for i := range 2 * forgetEvery {
		if a.CanViewAccount(facadePrincipal("caller-"+strings.Repeat("x", i%7)+string(rune('a'+i%26)), "1001"), accountID("1001")) {
			t.Fatal("a stranger was allowed")
		}
	}
	x, err := p.Explain(facadePrincipal("alice", ""), "account:1001", "view_account")
	if err != nil || !x.Allow || !strings.Contains(x.Rule, "p, team:x, account:1001, view_account") {
		t.Fatalf("explain through casbin's EnforceEx: %+v %v", x, err)
	}
}
