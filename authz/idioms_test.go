package authz

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/facade-dev/facade/authz/compiled"
	"github.com/facade-dev/facade/authz/internal/policytest"
)

// TestTheAdminIdiomIsValidAndATypoIsNot: "p, role:admin, *, *" loads
// under a matcher that names "*"; a typo is still refused, with the
// nearest action.
func TestTheAdminIdiomIsValidAndATypoIsNot(t *testing.T) {
	lines := []string{
		"p, role:admin, *, *",
		"g, ann, role:admin",
		"p, ben, account:[0-9]+, view_account", // keyMatch2 reads a regular expression
		"p, ben, project:(WEB|API), view",      // and an alternation
		"p, cat, project:WEB/:plan, view",      // and a :name segment
		"p, role:auditor, project:WEB, *",
		"g, dan, role:auditor",
	}
	dir := t.TempDir()
	policytest.WriteFile(t, filepath.Join(dir, "model.conf"), policytest.AdminModel)
	policytest.WriteFile(t, filepath.Join(dir, "policy.csv"), strings.Join(lines, "\n")+"\n")
	if _, _, err := Load(filepath.Join(dir, "model.conf"), filepath.Join(dir, "policy.csv")); err != nil {
		t.Fatalf("the admin idiom is refused: %v", err)
	}

	// Under a matcher that does not name "*", "*" as an action is a typo.
	problems := Check("../model.conf", writePolicy(t, "p, role:admin, project:WEB, *"))
	if !compiled.HasErrors(problems) || !strings.Contains(problems[0].String(), `:1: unknown action "*"`) {
		t.Fatalf("\"*\" without a matcher that names it: %v", problems)
	}
	problems = Check(filepath.Join(dir, "model.conf"), writePolicy(t, "p, bob, project:WEB, veiw"))
	if !compiled.HasErrors(problems) || !strings.Contains(problems[0].String(), `:1: unknown action "veiw" (did you mean "view"?)`) {
		t.Fatalf("typo: %v", problems)
	}
	problems = Check(filepath.Join(dir, "model.conf"), writePolicy(t, "p, bob, account:1, view_acount"))
	if !compiled.HasErrors(problems) || !strings.Contains(problems[0].String(), `(did you mean "view_account"?)`) {
		t.Fatalf("typo: %v", problems)
	}
}

func writePolicy(t *testing.T, lines ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "policy.csv")
	policytest.WriteFile(t, path, strings.Join(lines, "\n")+"\n")
	return path
}

func itoa(n int) string { return strconv.Itoa(n) }
