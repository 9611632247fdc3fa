package server_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	facade "github.com/facade-dev/facade"
	"github.com/facade-dev/facade/authz/policytool"
)

// TestEveryPolicyToolAgreesWithTheService: the same questions asked of the
// running service (over HTTP, with tokens) and of every tool of `facade
// policy` (policytool, the code the tools run) get the same answer: explain,
// test, who, what and diff, and every principal row of report is a grant
// the service honours. The questions cover the plan-or-project rule (carol
// sees plan:PROJ-CORE through her team's project:PROJ grant: `policy test`
// said "want allow, got deny" and `who` listed nobody), roles from the
// policy (grace is a professor by a g line), token roles, groups and a
// wildcard. (Usage counts the lines the service's own decisions went
// through: package authz records them, so it cannot disagree.)
func TestEveryPolicyToolAgreesWithTheService(t *testing.T) {
	policyText := testPolicy + `p, dave, plan:PROJ-CORE, view
g, grace, role:professor
p, grace, class:english-101, view
`
	e := newEnv(t, withBuilds(), withModel(mustReadFile(t, modelFile), policyText))
	dir := t.TempDir()
	policyPath, emptyPath := filepath.Join(dir, "policy.csv"), filepath.Join(dir, "empty.csv")
	for path, text := range map[string]string{policyPath: policyText, emptyPath: "p, nobody, account:0, view_account\n"} {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pol, err := policytool.Open(modelFile, policyPath)
	if err != nil {
		t.Fatal(err)
	}
	empty, err := policytool.Open(modelFile, emptyPath)
	if err != nil {
		t.Fatal(err)
	}
	type who struct {
		sub, role string
		groups    []string
	}
	principals := []who{
		{"carol", "developer", nil}, {"dave", "", nil}, {"frank", "professor", nil}, {"bob", "professor", nil},
		{"bob", "", nil}, {"grace", "", nil}, {"alice", "student", nil}, {"alice", "", nil}, {"ida", "", nil},
		{"zed", "", []string{"auditors"}}, {"mallory", "developer", nil},
	}
	type question struct{ method, path, body, obj, act string }
	var questions []question
	for _, s := range []string{"alice", "ghost", "dave"} {
		questions = append(questions,
			question{"GET", "/student/" + s + "/english/grade", "", "student:" + s, "view"},
			question{"PUT", "/student/" + s + "/english/grade", `{"grade":"B"}`, "student:" + s, "update"})
	}
	for _, a := range []string{"1001", "2002", "m1"} {
		questions = append(questions, question{"GET", "/rs/account/" + a + "/balance", "", "account:" + a, "view_account"})
	}
	for _, k := range []string{"PROJ-CORE", "PROJ-API", "WEB-NIGHTLY", "WEB-SITE"} {
		questions = append(questions, question{"GET", "/rest/api/latest/result/" + k, "", "plan:" + k, "view"})
	}
	var testFile strings.Builder
	asked, allowed := 0, 0
	for _, p := range principals {
		pr := facade.Principal{ID: p.sub, Role: p.role, Groups: p.groups}
		var roles []string
		if p.role != "" {
			roles = []string{p.role}
		}
		what := pol.What(pr)
		var diff []string
		if len(p.groups) == 0 { // diff asks each principal with --role, no groups
			changes, err := policytool.Diff(empty, pol, roles)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range changes {
				diff = append(diff, c.String())
			}
		}
		for _, q := range questions {
			r := e.do(req{method: q.method, path: q.path, body: q.body, token: tokenWithGroups(t, p.sub, p.role, p.groups),
				header: map[string]string{"If-Match": "*"}})
			service := r.status != http.StatusForbidden
			asked++
			if service {
				allowed++
			}
			say := func(tool string, got bool) {
				t.Helper()
				if got != service {
					t.Errorf("%+v %s %s: the service says allowed=%v (%d), policy %s says %v", p, q.obj, q.act, service, r.status, tool, got)
				}
			}
			x, err := pol.Explain(pr, q.obj, q.act)
			if err != nil {
				t.Fatal(err)
			}
			say("explain", x.Allow)
			verdict := map[bool]string{true: "allow", false: "deny"}[service]
			sub := p.sub
			for _, g := range p.groups {
				sub += "+group:" + g
			}
			if p.role != "" {
				sub += "+role:" + p.role
			}
			fmt.Fprintf(&testFile, "%s %s %s %s\n", verdict, sub, q.obj, q.act)
			if strings.Contains(policyText, " "+p.sub+",") { // who lists the principals the policy names
				principals, _ := pol.Who(q.obj, q.act, p.groups, roles)
				say("who", slices.Contains(principals, p.sub))
			}
			if named := strings.Contains(policyText, q.obj+","); named || slices.Contains(what, q.obj+" "+q.act) {
				say("what", slices.Contains(what, q.obj+" "+q.act))
			}
			if len(p.groups) == 0 && strings.Contains(policyText, q.obj+",") {
				// From a policy that grants nothing: a change exactly where the
				// service allows what the built-in rules alone do not.
				before := empty.Decide(pr, q.obj, q.act)
				if slices.Contains(diff, fmt.Sprintf("+ allow %s %s %s", p.sub, q.obj, q.act)) != (service && !before) {
					t.Errorf("%+v %s %s: the service says allowed=%v, before %v; policy diff says %v", p, q.obj, q.act, service, before, diff)
				}
			}
		}
	}
	res, err := pol.RunTests("service.test", []byte(testFile.String()))
	if err != nil || len(res.Mismatches) > 0 || res.Cases != asked {
		t.Errorf("policy test of the service's own answers: %d cases, err %v, mismatches:\n%s", res.Cases, err, strings.Join(res.Mismatches, "\n"))
	}
	// The access review: each principal's row is honoured by the service.
	grants, err := pol.Report("")
	if err != nil {
		t.Fatal(err)
	}
	rows := 0
	for _, g := range grants {
		if g.Kind != "principal" {
			continue
		}
		var path string
		switch {
		case strings.HasPrefix(g.Object, "account:") && g.Action == "view_account" && !strings.Contains(g.Object, "*"):
			path = "/rs/account/" + strings.TrimPrefix(g.Object, "account:") + "/balance"
		case strings.HasPrefix(g.Object, "plan:"):
			path = "/rest/api/latest/result/" + strings.TrimPrefix(g.Object, "plan:")
		case g.Object == "project:PROJ":
			path = "/rest/api/latest/result/PROJ-API"
		default:
			continue
		}
		rows++
		if r := e.do(req{method: "GET", path: path, token: token(t, g.Subject, "")}); r.status == http.StatusForbidden {
			t.Errorf("report grants %s %s %s; the service refuses GET %s", g.Subject, g.Object, g.Action, path)
		}
	}
	if asked < 140 || allowed < 20 || rows < 5 {
		t.Fatalf("only %d questions (%d allowed), %d report rows checked", asked, allowed, rows)
	}
}
