package authz

import (
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// adminModel is the admin idiom of casbin's documentation: a line whose
// object or action is "*" matches every object or action, because the
// matcher names "*".
const adminModel = `[request_definition]
r = sub, obj, act

[policy_definition]
p = sub, obj, act

[role_definition]
g = _, _

[policy_effect]
e = some(where (p.eft == allow))

[matchers]
m = g(r.sub, p.sub) && (keyMatch2(r.obj, p.obj) || p.obj == "*") && (r.act == p.act || p.act == "*")
`

// TestTheAdminIdiomIsValidAndMeansWhatCasbinSays: "p, role:admin, *, *"
// loads under a matcher that names "*", is decided by the index, and
// grants what stock casbin grants; a typo is still refused, with the
// nearest action.
func TestTheAdminIdiomIsValidAndMeansWhatCasbinSays(t *testing.T) {
	lines := []string{
		"p, role:admin, *, *",
		"g, ann, role:admin",
		"p, ben, account:[0-9]+, view_account", // keyMatch2 reads a regular expression
		"p, ben, project:(WEB|API), view",      // and an alternation
		"p, cat, project:WEB/:plan, view",      // and a :name segment
		"p, role:auditor, project:WEB, *",
		"g, dan, role:auditor",
	}
	rng := rand.New(rand.NewPCG(1, 2))
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "model.conf"), adminModel)
	writeFile(t, filepath.Join(dir, "policy.csv"), strings.Join(lines, "\n")+"\n")
	p, err := Open(filepath.Join(dir, "model.conf"), filepath.Join(dir, "policy.csv"))
	if err != nil {
		t.Fatalf("the admin idiom is refused: %v", err)
	}
	if p.Decider() != deciderIndex || !strings.Contains(p.Family(), "literal grants (*, *)") {
		t.Fatalf("decider %s (%s), want the index", p.Decider(), p.Family())
	}
	for _, c := range []struct {
		sub, obj, act string
		want          bool
	}{
		{"ann", "account:1001", "transfer", true}, {"ann", "project:ANY", "view", true},
		{"ben", "account:1001", "view_account", true},
		// keyMatch2 reads ":[0-9]+" as a :name segment (anything up to a
		// slash), exactly as casbin does, not as the digits it looks like.
		{"ben", "account:x1", "view_account", true}, {"ben", "accounts", "view_account", true},
		{"ben", "project:API", "view", true}, {"ben", "project:API/1", "view", false},
		{"cat", "project:WEB/NIGHTLY", "view", true}, {"cat", "project:WEB/a/b", "view", false},
		{"dan", "project:WEB", "update", true}, {"dan", "plan:WEB", "view", false},
	} {
		if got := p.Enforce(c.sub, c.obj, c.act); got != c.want {
			t.Errorf("(%s, %s, %s) = %v, want %v", c.sub, c.obj, c.act, got, c.want)
		}
	}
	agree(t, adminModel, lines, rng, deciderIndex, 0)

	// Under a matcher that does not name "*", "*" as an action is a typo.
	problems := Check("../model.conf", writePolicy(t, "p, role:admin, project:WEB, *"))
	if !HasErrors(problems) || !strings.Contains(problems[0].String(), `:1: unknown action "*"`) {
		t.Fatalf("\"*\" without a matcher that names it: %v", problems)
	}
	problems = Check(filepath.Join(dir, "model.conf"), writePolicy(t, "p, bob, project:WEB, veiw"))
	if !HasErrors(problems) || !strings.Contains(problems[0].String(), `:1: unknown action "veiw" (did you mean "view"?)`) {
		t.Fatalf("typo: %v", problems)
	}
	problems = Check(filepath.Join(dir, "model.conf"), writePolicy(t, "p, bob, account:1, view_acount"))
	if !HasErrors(problems) || !strings.Contains(problems[0].String(), `(did you mean "view_account"?)`) {
		t.Fatalf("typo: %v", problems)
	}
}

func writePolicy(t *testing.T, lines ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "policy.csv")
	writeFile(t, path, strings.Join(lines, "\n")+"\n")
	return path
}

func itoa(n int) string { return strconv.Itoa(n) }
