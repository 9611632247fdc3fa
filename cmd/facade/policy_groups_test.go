package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// providerPolicy grants to groups named as real providers name them,
// written with casbin's CSV quoting where a name needs it.
const providerPolicy = `p, group:acme:payments, account:1001, view_account
p, group:team-a/admins, project:PROJ, view
p, "group:Domain Users", account:2002, view_account
p, "group:a,b", account:3003, view_account
g, "group:Domain Users", team:staff
p, team:staff, project:WEB, view
`

// TestPolicyToolsTakeAnyGroupNameAProviderSends: check, explain, who,
// what, test and report all take group names with ':', '/', spaces and
// commas, as --group (with or without the group: prefix), in test files
// (the CSV form) and as report subjects; a name no token can carry is
// refused on the command line and warned of in the policy.
func TestPolicyToolsTakeAnyGroupNameAProviderSends(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	policy := write("policy.csv", providerPolicy)
	env := settingsFrom(map[string]string{"FACADE_MODEL": "../../model.conf", "FACADE_POLICY": policy})
	if code, out, stderr := runCmd(env, "policy", "check"); code != 0 || strings.Contains(out, "warning") {
		t.Fatalf("check: exit %d %q %q", code, out, stderr)
	}
	code, out, _ := runCmd(env, "policy", "explain", "--sub", "zed", "--group", "acme:payments", "--obj", "account:1001", "--act", "view_account")
	if code != 0 || !strings.Contains(out, "(token groups) zed is a member of group:acme:payments") || !strings.Contains(out, policy+":1: p, group:acme:payments, account:1001") {
		t.Fatalf("explain --group acme:payments: exit %d %q", code, out)
	}
	code, out, _ = runCmd(env, "policy", "explain", "--sub", "zed", "--group", "group:Domain Users", "--obj", "project:WEB", "--act", "view")
	if code != 0 || !strings.Contains(out, `g, "group:Domain Users", team:staff`) {
		t.Fatalf("explain --group 'group:Domain Users': exit %d %q", code, out)
	}
	for _, g := range []string{"acme", "Domain", "a", "team-a"} {
		if code, out, _ := runCmd(env, "policy", "explain", "--sub", "zed", "--group", g, "--obj", "account:1001", "--act", "view_account"); code != 1 {
			t.Fatalf("explain --group %s: exit %d %q, want deny", g, code, out)
		}
	}
	if code, _, stderr := runCmd(env, "policy", "explain", "--sub", "zed", "--group", "bad\x01name", "--obj", "account:1001", "--act", "view_account"); code != 2 || !strings.Contains(stderr, "printable") {
		t.Fatalf("explain --group with a control character: exit %d %q", code, stderr)
	}
	code, out, _ = runCmd(env, "policy", "who", "--obj", "account:3003", "--act", "view_account", "--group", "a,b")
	if code != 0 || !strings.Contains(out, "group group:a,b\n") {
		t.Fatalf("who: exit %d %q", code, out)
	}
	code, out, _ = runCmd(env, "policy", "what", "--sub", "zed", "--group", "team-a/admins", "--group", "Domain Users")
	if code != 0 || out != "account:2002 view_account\nproject:PROJ view\nproject:WEB view\n" {
		t.Fatalf("what: exit %d %q", code, out)
	}
	code, out, _ = runCmd(env, "policy", "what", "--sub", "group:Domain Users")
	if code != 0 || out != "account:2002 view_account\nproject:WEB view\n" {
		t.Fatalf("what --sub 'group:Domain Users': exit %d %q", code, out)
	}
	tests := write("groups.txt", `allow zed+group:acme:payments+group:team-a/admins account:1001 view_account
deny zed+group:acme account:1001 view_account
allow, zed, account:2002, view_account, "group:Domain Users"
allow, zed, account:3003, view_account, "group:a,b"
deny, zed, account:3003, view_account, group:a, group:b
deny, zed, account:2002, view_account, "group:Domain Users "
`)
	if code, out, stderr := runCmd(env, "policy", "test", tests); code != 0 || !strings.Contains(out, "6 cases, 0 mismatches") {
		t.Fatalf("test: exit %d %q %q", code, out, stderr)
	}
	if code, _, stderr := runCmd(env, "policy", "test", write("bad.txt", "allow, zed, account:1001, view_account, acme:payments\n")); code != 2 || !strings.Contains(stderr, "bad.txt:1: ") {
		t.Fatalf("test with a group not written group:NAME: exit %d %q", code, stderr)
	}
	code, out, _ = runCmd(env, "policy", "report", "--format", "json", "--subject", "group:Domain Users")
	var grants []struct{ Subject, Object string }
	if err := json.Unmarshal([]byte(out), &grants); code != 0 || err != nil || len(grants) != 2 || grants[0].Subject != "group:Domain Users" {
		t.Fatalf("report --subject 'group:Domain Users': exit %d %v %q", code, err, out)
	}
	code, out, _ = runCmd(env, "policy", "report")
	if code != 0 || !strings.Contains(out, "\"group:a,b\",group,account:3003,view_account,") {
		t.Fatalf("report (CSV): exit %d %q", code, out)
	}
	// A group line no token's name can match is warned of, at its line.
	warned := write("warned.csv", providerPolicy+"p, group:bell\a, account:1001, view_account\n")
	code, out, _ = runCmd(env, "policy", "check", "--policy", warned)
	if code != 0 || !strings.Contains(out, warned+":7: warning: ") || !strings.Contains(out, "no group a token can carry") {
		t.Fatalf("check of a group no token can carry: exit %d %q", code, out)
	}
}

// TestExplainAnswersTheGradeQuestionWithPolicyRoles: --grade asks what
// the service asks; a role given by the policy to a group counts, and a
// class grant alone reaches no grade.
func TestExplainAnswersTheGradeQuestionWithPolicyRoles(t *testing.T) {
	dir := t.TempDir()
	base := "p, group:english-graders, class:english-101, view\ng, student:henry, class:english-101\n"
	without, with := filepath.Join(dir, "without.csv"), filepath.Join(dir, "with.csv")
	if err := os.WriteFile(without, []byte(base), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(with, []byte(base+"g, group:english-graders, role:professor\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := settingsFrom(map[string]string{"FACADE_MODEL": "../../model.conf", "FACADE_POLICY": without})
	code, out, _ := runCmd(env, "policy", "explain", "--sub", "zed", "--group", "english-graders", "--grade", "henry", "--act", "view")
	if code != 1 || !strings.Contains(out, "only roles student and professor reach grades") {
		t.Fatalf("a class grant without a role: exit %d %q", code, out)
	}
	code, out, _ = runCmd(env, "policy", "explain", "--policy", with, "--sub", "zed", "--group", "english-graders", "--grade", "henry", "--act", "view")
	if code != 0 || !strings.Contains(out, with+":3: g, group:english-graders, role:professor") || !strings.Contains(out, with+":1: p, group:english-graders") {
		t.Fatalf("a role from the policy: exit %d %q", code, out)
	}
	if code, out, _ := runCmd(env, "policy", "explain", "--policy", with, "--sub", "zed", "--group", "english-graders", "--grade", "henry", "--act", "update"); code != 1 {
		t.Fatalf("update with view only: exit %d %q", code, out)
	}
	if code, _, stderr := runCmd(env, "policy", "explain", "--sub", "zed", "--grade", "henry", "--obj", "account:1", "--act", "view"); code != 2 || !strings.Contains(stderr, "not both") {
		t.Fatalf("--grade with --obj: exit %d %q", code, stderr)
	}
}
