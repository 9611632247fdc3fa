package authz

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/facade-dev/facade/authz/compiled"
	"github.com/facade-dev/facade/authz/internal/policytest"
)

// TestCheckReportsLinesThatCanNeverMatter: what an ops person wants
// pointed out before a policy ships: a group cycle, a grant to a group
// nobody is in, a duplicate casbin ignores, and a chain longer than casbin
// follows; each at its file:line.
func TestCheckReportsLinesThatCanNeverMatter(t *testing.T) {
	lines := []string{
		"p, team:ops, account:1001, view_account", // 1: nobody is in team:ops
		"g, carol, team:a",                        // 2
		"g, team:a, team:b",                       // 3
		"g, team:b, team:a",                       // 4: closes the cycle a -> b -> a
		"p, team:b, project:PROJ, view",           // 5
		"p, team:b, project:PROJ, view",           // 6: duplicate of 5
	}
	for i := range 12 { // 7..18: ann -> chain:0 -> ... -> chain:11
		from := fmt.Sprintf("chain:%d", i-1)
		if i == 0 {
			from = "ann"
		}
		lines = append(lines, fmt.Sprintf("g, %s, chain:%d", from, i))
	}
	lines = append(lines, "p, chain:11, account:2002, view_account") // 19
	dir := t.TempDir()
	policy := filepath.Join(dir, "policy.csv")
	policytest.WriteFile(t, policy, strings.Join(lines, "\n")+"\n")
	var got []string
	for _, p := range Check("../model.conf", policy) {
		got = append(got, p.String())
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{
		policy + ":1: ", `grant to group "team:ops", which nobody is in`,
		policy + ":4: ", "group cycle: team:a -> team:b -> team:a",
		policy + ":6: ", "duplicate of line 5",
		"ann reaches chain:10 only through more than 10 g links",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("policy check does not report %q:\n%s", want, all)
		}
	}
}

// TestCheckWarnsOfGroupsNoTokenCanCarry: policy check is quiet about
// group lines any provider's name matches (a colon, a slash, spaces in
// quotes), and warns, at the line, of group:NAME subjects no token can
// carry and no g line fills: empty, a control character, over 256
// characters. Unquoted trailing spaces stay refused; quoted ones are the
// name's own.
func TestCheckWarnsOfGroupsNoTokenCanCarry(t *testing.T) {
	long := "group:" + strings.Repeat("n", 257)
	lines := []string{
		"p, group:acme:payments, account:1001, view_account",   // 1: fine
		"p, group:team-a/admins, project:PROJ, view",           // 2: fine
		`p, "group:Domain Users", account:1001, view_account`,  // 3: fine
		`p, "group:trailing ", account:1001, view_account`,     // 4: fine, quoted
		"p, group:, account:1001, view_account",                // 5: empty name
		"p, group:bell\a, account:1001, view_account",          // 6: a control character
		"p, " + long + ", account:1001, view_account",          // 7: 257 characters
		"g, group:tab\tbed, team:x",                            // 8: a control character, in a g line
		"p, team:x, project:PROJ, view",                        // 9
		"g, carol, group:",                                     // 10: gives group: a member
		"p, group:zero\u200bwidth, account:1001, view_account", // 11: an invisible character
	}
	dir := t.TempDir()
	policy := filepath.Join(dir, "policy.csv")
	policytest.WriteFile(t, policy, strings.Join(lines, "\n")+"\n")
	byLine := map[int]string{}
	for _, p := range Check("../model.conf", policy) {
		if !p.Warning {
			t.Errorf("refused: %s", p)
		}
		byLine[p.Line] += p.Msg
	}
	for _, n := range []int{1, 2, 3, 4, 5, 9, 10} {
		if byLine[n] != "" {
			t.Errorf("line %d: %s", n, byLine[n])
		}
	}
	for n, want := range map[int]string{6: "U+0007", 7: "257 characters", 8: "U+0009", 11: "U+200B"} {
		if !strings.Contains(byLine[n], "no group a token can carry") || !strings.Contains(byLine[n], want) {
			t.Errorf("line %d: %q, want a warning naming %s", n, byLine[n], want)
		}
	}
	// A grant to group: with no member line is warned of too.
	policytest.WriteFile(t, policy, "p, group:, account:1001, view_account\n")
	if ps := Check("../model.conf", policy); len(ps) != 1 || !strings.Contains(ps[0].Msg, "empty") {
		t.Errorf("group: without members: %v", ps)
	}
	policytest.WriteFile(t, policy, "p, group:trailing , account:1001, view_account\n")
	if ps := Check("../model.conf", policy); !compiled.HasErrors(ps) || !strings.Contains(ps[0].Msg, "quote the field") {
		t.Errorf("unquoted trailing space: %v", ps)
	}
}

// TestCheckWarnsOfAMisspelledRole: "g, X, role:profesor" gives a role
// nothing reads; check says which one was meant. Other roles are quiet.
func TestCheckWarnsOfAMisspelledRole(t *testing.T) {
	policy := filepath.Join(t.TempDir(), "policy.csv")
	policytest.WriteFile(t, policy, "g, group:graders, role:profesor\ng, ann, role:professor\ng, bob, role:auditor\ng, cy, role:studnet\n")
	var got []string
	for _, p := range Check("../model.conf", policy) {
		got = append(got, p.String())
	}
	want := []string{
		policy + `:1: warning: role "profesor" (did you mean "professor"?): only roles professor and student carry grade rules`,
		policy + `:4: warning: role "studnet" (did you mean "student"?): only roles professor and student carry grade rules`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("check:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestTheShippedFilesCheckClean: the repository's model.conf and
// policy.csv pass `policy check` without a finding.
func TestTheShippedFilesCheckClean(t *testing.T) {
	if problems := Check("../model.conf", "../policy.csv"); len(problems) != 0 {
		t.Fatalf("the shipped files: %v", problems)
	}
}

// TestCheckWarnsOfAClassGrantNoRoleLineMakesAProfessor: when the policy
// gives the professor role through role: lines, a class grant (view,
// update, post) to a subject none of them reaches is warned of once, as a
// warning that names the token's role claim; a subject that reaches the
// role itself, through a group, or through a member is quiet, as are
// other objects, and a policy without role: lines (roles from tokens).
func TestCheckWarnsOfAClassGrantNoRoleLineMakesAProfessor(t *testing.T) {
	lines := []string{
		"g, group:english-graders, role:professor",   // 1
		"g, ann, role:professor",                     // 2
		"p, erin, class:english-101, view",           // 3: erin is no professor here
		"p, erin, class:english-101, post",           // 4: said once
		"p, group:english-graders, class:math, post", // 5: the group has the role
		"p, ann, class:english-101, update",          // 6
		"p, team:lecturers, class:english-101, post", // 7: ann is a member
		"g, ann, team:lecturers",                     // 8
		"p, gus, account:1001, view_account",         // 9: not a class
		"g, gus, group:english-graders",              // 10
		"p, gus, class:english-101, view",            // 11: through his group
		"p, team:empty, class:english-101, view",     // 12: no member is one
	}
	policy := filepath.Join(t.TempDir(), "policy.csv")
	policytest.WriteFile(t, policy, strings.Join(lines, "\n")+"\n")
	byLine := map[int]string{}
	for _, p := range Check("../model.conf", policy) {
		if !p.Warning {
			t.Errorf("refused: %s", p)
		}
		byLine[p.Line] += p.Msg
	}
	for n := range len(lines) + 1 {
		warned := strings.Contains(byLine[n], "token's role claim says professor")
		if want := n == 3 || n == 12; warned != want {
			t.Errorf("line %d: %q, want warned=%v", n, byLine[n], want)
		}
	}
	// Without any role: line every role comes from tokens: nothing to say.
	policytest.WriteFile(t, policy, "p, erin, class:english-101, view\np, bob, class:english-101, post\n")
	if ps := Check("../model.conf", policy); len(ps) != 0 {
		t.Errorf("a policy without role lines: %v", ps)
	}
}
