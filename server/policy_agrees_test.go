package server_test

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/casbin/casbin/v2"
	"github.com/golang-jwt/jwt/v5"

	facade "github.com/facade-dev/facade"
	"github.com/facade-dev/facade/authz/policytool"
)

// TestServiceAnswersWhatStockCasbinDecides: for every kind of principal
// and identifiers that are theirs and not theirs, the running service
// refuses (403) exactly when stock casbin, given the same model and
// policy files, denies the question the route asks (docs/policy.md).
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
		for _, class := range []string{"english-101", "history-201"} {
			professor := p.role == "professor"
			check(p, "GET", "/class/"+class+"/posting", "", professor && enforce(p.sub, "class:"+class, "view"))
			check(p, "POST", "/class/"+class+"/grades/post", "", professor && enforce(p.sub, "class:"+class, "post"))
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

// TestServiceAnswersWhatPolicyExplainSays: over generated policies (class
// grants to principals, teams and provider groups named with ':' and
// spaces, enrollments, roles given by the policy to principals, teams and
// groups, account grants) the running service lets a call through
// authorization exactly when `facade policy explain` (policytool.Policy.Explain,
// the same code) says allow, grade questions included, for principals of
// every kind: a token role or none, groups or none.
func TestServiceAnswersWhatPolicyExplainSays(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 6))
	students := []string{"alice", "ghost", "dave"}
	accounts := []string{"1001", "2002"}
	type who struct {
		sub, role string
		groups    []string
	}
	principals := []who{
		{"pat", "", nil}, {"pat", "professor", nil}, {"pat", "student", nil}, {"alice", "student", nil}, {"alice", "", nil},
		{"sue", "", []string{"english-graders"}}, {"sue", "developer", []string{"acme:payments", "Domain Users"}},
		{"kim", "", []string{"Domain Users"}}, {"kim", "student", []string{"team-a/admins"}}, {"team:staff", "professor", nil},
	}
	subjects := []string{"pat", "sue", "kim", "alice", "team:staff", "group:english-graders", "group:acme:payments", `"group:Domain Users"`, "group:team-a/admins"}
	checked, allowed, gradesAllowed := 0, 0, 0
	for round := range 12 {
		var lines []string
		for range 2 + rng.IntN(4) {
			lines = append(lines, fmt.Sprintf("g, student:%s, class:%s", pickOne(rng, students), pickOne(rng, []string{"english-101", "math-201"})))
		}
		for range 3 + rng.IntN(6) {
			lines = append(lines, fmt.Sprintf("p, %s, class:%s, %s", pickOne(rng, subjects), pickOne(rng, []string{"english-101", "math-201"}), pickOne(rng, []string{"view", "update", "post"})))
		}
		for range 2 + rng.IntN(5) {
			lines = append(lines, fmt.Sprintf("g, %s, %s", pickOne(rng, subjects), pickOne(rng, []string{"role:professor", "role:student", "team:staff"})))
		}
		for range 1 + rng.IntN(3) {
			lines = append(lines, fmt.Sprintf("p, %s, account:%s, view_account", pickOne(rng, subjects), pickOne(rng, accounts)))
		}
		policyText := strings.Join(lines, "\n") + "\n"
		e := newEnv(t, withModel(mustReadFile(t, modelFile), policyText))
		policyPath := filepath.Join(t.TempDir(), "policy.csv")
		if err := os.WriteFile(policyPath, []byte(policyText), 0o644); err != nil {
			t.Fatal(err)
		}
		pol, err := policytool.Open(modelFile, policyPath)
		if err != nil {
			t.Fatalf("round %d: %v\n%s", round, err, policyText)
		}
		for _, p := range principals {
			tok := tokenWithGroups(t, p.sub, p.role, p.groups)
			pr := facade.Principal{ID: p.sub, Role: p.role, Groups: p.groups}
			check := func(method, path, body, obj, act string) {
				t.Helper()
				x, err := pol.Explain(pr, obj, act)
				if err != nil {
					t.Fatal(err)
				}
				r := e.do(req{method: method, path: path, token: tok, body: body, header: map[string]string{"If-Match": "*"}})
				if got := r.status != http.StatusForbidden; got != x.Allow {
					t.Errorf("%+v %s %s: %d, explain says allow=%v:\n  %s\npolicy:\n%s", p, method, path, r.status, x.Allow,
						strings.Join(x.Lines(), "\n  "), policyText)
				}
				checked++
				if x.Allow {
					allowed++
					if strings.HasPrefix(obj, "student:") {
						gradesAllowed++
					}
				}
			}
			for _, s := range students {
				check("GET", "/student/"+s+"/english/grade", "", "student:"+s, "view")
				check("PUT", "/student/"+s+"/english/grade", `{"grade":"B"}`, "student:"+s, "update")
			}
			for _, a := range accounts {
				check("GET", "/rs/account/"+a+"/balance", "", "account:"+a, "view_account")
			}
			for _, class := range []string{"english-101", "math-201"} {
				check("GET", "/class/"+class+"/posting", "", "class:"+class, "view")
				check("POST", "/class/"+class+"/grades/post", "", "class:"+class, "post")
			}
		}
	}
	if checked < 12*10*8 || allowed < checked/16 || gradesAllowed < 20 {
		t.Fatalf("only %d questions asked, %d allowed (%d grades)", checked, allowed, gradesAllowed)
	}
	t.Logf("%d questions over 12 generated policies, %d allowed (%d grades)", checked, allowed, gradesAllowed)
}

func pickOne(rng *rand.Rand, xs []string) string { return xs[rng.IntN(len(xs))] }

func mustReadFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// tokenWithGroups is token's HS256 token with a groups claim, as a
// provider's would carry it.
func tokenWithGroups(t testing.TB, sub, role string, groups []string) string {
	t.Helper()
	claims := jwt.MapClaims{"sub": sub, "iat": time.Now().Unix(), "exp": time.Now().Add(time.Hour).Unix()}
	if role != "" {
		claims["role"] = role
	}
	if groups != nil {
		claims["groups"] = groups
	}
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(testSecret)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestGroupNamesFromATokenGrantOnlyTheirOwnLines: over HTTP, a token
// carrying a provider's group name (a colon, a slash, spaces, a comma)
// reads what the group's line grants; a token carrying a name that looks
// like it (a prefix, one word, the quotes, a space more, one half of a
// comma) is refused, 403 as for any refusal.
func TestGroupNamesFromATokenGrantOnlyTheirOwnLines(t *testing.T) {
	e := newEnv(t, withPolicyLines(
		"p, group:acme:payments, account:1001, view_account",
		`p, "group:Domain Users", account:2002, view_account`,
		`p, "group:a,b", account:ghost-acct, view_account`,
		"p, group:team-a/admins, account:m1, view_account",
	))
	for _, c := range []struct {
		groups  []string
		account string
		want    bool
	}{
		{[]string{"acme:payments"}, "1001", true},
		{[]string{"Domain Users"}, "2002", true},
		{[]string{"a,b"}, "ghost-acct", true},
		{[]string{"team-a/admins"}, "m1", true},
		{[]string{"acme"}, "1001", false},
		{[]string{"acme:payments "}, "1001", false},
		{[]string{"group:acme:payments"}, "1001", false},
		{[]string{"Domain"}, "2002", false},
		{[]string{`"Domain Users"`}, "2002", false},
		{[]string{"Domain Users\t"}, "2002", false},
		{[]string{"a", "b"}, "ghost-acct", false},
		{[]string{"team-a"}, "m1", false},
		{[]string{"acme:payments"}, "2002", false},
	} {
		r := e.do(req{method: "GET", path: "/rs/account/" + c.account + "/balance", token: tokenWithGroups(t, "zed", "", c.groups)})
		if got := r.status != http.StatusForbidden; got != c.want {
			t.Errorf("groups %q on account %s: %d, want allowed=%v", c.groups, c.account, r.status, c.want)
		}
	}
}
