package server_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/casbin/casbin/v2"
)

// TestServiceAnswersWhatStockCasbinDecides: for every kind of principal
// and identifiers that are theirs and not theirs, the running service
// refuses (403) exactly when stock casbin, given the same model and
// policy files, denies the question the route asks (README, "Policy").
// Anything else (200, 201, 404, 422) means the service let the call
// through authorization.
func TestServiceAnswersWhatStockCasbinDecides(t *testing.T) {
	e := newEnv(t, withBuilds())
	policyPath := filepath.Join(t.TempDir(), "policy.csv")
	if err := os.WriteFile(policyPath, []byte(testPolicy), 0o644); err != nil {
		t.Fatal(err)
	}
	stock, err := casbin.NewEnforcer(modelFile, policyPath)
	if err != nil {
		t.Fatal(err)
	}
	enforce := func(sub, obj, act string) bool {
		ok, err := stock.Enforce(sub, obj, act)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	principals := []struct{ sub, role string }{
		{"alice", "customer"}, {"bob", "professor"}, {"erin", "professor"}, {"frank", "professor"},
		{"carol", "developer"}, {"dave", "developer"}, {"mallory", "developer"},
		{"team:platform", "developer"}, {"team:history", "professor"}, {"student:alice", "professor"},
	}
	students := []string{"alice", "ghost", "dave", "zed"}
	accounts := []string{"1001", "2002", "ghost-acct", "9999"}
	plans := [][2]string{{"PROJ", "CORE"}, {"PROJ", "API"}, {"WEB", "NIGHTLY"}, {"WEB", "SITE"}, {"NOPE", "X"}}
	checked := 0
	check := func(p struct{ sub, role string }, method, path, body string, want bool) {
		t.Helper()
		r := e.do(req{method: method, path: path, token: token(t, p.sub, p.role), body: body,
			header: map[string]string{"If-Match": "*"}})
		if got := r.status != 403; got != want {
			t.Errorf("%s (%s) %s %s: %d; stock casbin says allowed=%v", p.sub, p.role, method, path, r.status, want)
		}
		checked++
	}
	for _, p := range principals {
		for _, s := range students {
			grade := "/student/" + s + "/english/grade"
			professor := p.role == "professor"
			check(p, "GET", grade, "", professor && enforce(p.sub, "student:"+s, "view"))
			check(p, "PUT", grade, `{"grade":"B"}`, professor && enforce(p.sub, "student:"+s, "update"))
		}
		for _, a := range accounts {
			check(p, "GET", "/rs/account/"+a+"/balance", "", enforce(p.sub, "account:"+a, "view_account"))
			for _, to := range accounts {
				if to == a {
					continue
				}
				want := enforce(p.sub, "account:"+a, "transfer") && enforce(p.sub, "account:"+to, "transfer")
				check(p, "POST", fmt.Sprintf("/rs/transfer/from/%s/to/%s/amount/0.01", a, to), "", want)
			}
		}
		for _, kp := range plans {
			want := enforce(p.sub, "plan:"+kp[0]+"-"+kp[1], "view") || enforce(p.sub, "project:"+kp[0], "view")
			check(p, "GET", "/rest/api/latest/result/"+kp[0]+"-"+kp[1], "", want)
		}
	}
	if checked < 290 {
		t.Fatalf("only %d questions asked", checked)
	}
}
