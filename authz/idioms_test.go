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
	adminModel, adminPolicy := policytest.ModelFiles(t, policytest.AdminModel, policytest.AdminLines...)
	if _, _, err := Load(adminModel, adminPolicy); err != nil {
		t.Fatalf("the admin idiom is refused: %v", err)
	}

	// Under a matcher that does not name "*", "*" as an action is a typo.
	problems := Check("../model.conf", writePolicy(t, "p, role:admin, project:WEB, *"))
	if !compiled.HasErrors(problems) || !strings.Contains(problems[0].String(), `:1: unknown action "*"`) {
		t.Fatalf("\"*\" without a matcher that names it: %v", problems)
	}
	problems = Check(adminModel, writePolicy(t, "p, bob, project:WEB, veiw"))
	if !compiled.HasErrors(problems) || !strings.Contains(problems[0].String(), `:1: unknown action "veiw" (did you mean "view"?)`) {
		t.Fatalf("typo: %v", problems)
	}
	problems = Check(adminModel, writePolicy(t, "p, bob, account:1, view_acount"))
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
