package compiled

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/facade-dev/facade/authz/internal/policytest"
)

// TestTheAdminIdiomMeansWhatCasbinSays: "p, role:admin, *, *" under a
// matcher that names "*" is decided by the index, and grants what stock
// casbin grants (package authz checks that the service accepts it, and
// refuses a typo).
func TestTheAdminIdiomMeansWhatCasbinSays(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	p, problems := compileTexts(policytest.AdminModel, strings.Join(policytest.AdminLines, "\n")+"\n")
	if p == nil {
		t.Fatalf("the admin idiom is refused: %v", problems)
	}
	if p.Decider() != DeciderIndex || !strings.Contains(p.Family, "literal grants (*, *)") {
		t.Fatalf("decider %s (%s), want the index", p.Decider(), p.Family)
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
		if got := p.Enforce(Subject{ID: c.sub}, c.obj, c.act); got != c.want {
			t.Errorf("(%s, %s, %s) = %v, want %v", c.sub, c.obj, c.act, got, c.want)
		}
	}
	agree(t, policytest.AdminModel, policytest.AdminLines, rng, DeciderIndex, 0)
}
