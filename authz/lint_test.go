package authz

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
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
	writeFile(t, policy, strings.Join(lines, "\n")+"\n")
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
