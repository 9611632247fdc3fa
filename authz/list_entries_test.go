package authz

import (
	"testing"

	facade "github.com/facade-dev/facade"
	"github.com/facade-dev/facade/authz/internal/policytest"
)

// TestListFiltersDecideAsTheSingleRoutesAndCountApart: the account and
// project lists (GET /rs/account, /rest/api/latest/project) keep exactly
// the entries the single routes would show, and an entry left out counts
// as "hidden" in facade_authz_list_entries_total, never as a denial (so a
// long list does not set off the refusal alerts).
func TestListFiltersDecideAsTheSingleRoutesAndCountApart(t *testing.T) {
	a, _ := newAuthorizer(t, specPolicy...)
	shown := a.metrics.ListEntries.WithLabelValues("shown")
	hidden := a.metrics.ListEntries.WithLabelValues("hidden")
	denied := a.metrics.Decisions.WithLabelValues("view_account", "deny")
	shownBefore, hiddenBefore, deniedBefore := policytest.CounterValue(shown), policytest.CounterValue(hidden), policytest.CounterValue(denied)
	alice, carol, ivan := facade.Principal{ID: "alice"}, facade.Principal{ID: "carol"}, facade.Principal{ID: "ivan"}
	for _, c := range []struct {
		name      string
		got, want bool
	}{
		{"alice's own account", a.ListAccount(alice, accountID("1001")), true},
		{"an account alice may only transfer from", a.ListAccount(alice, accountID("2002")), false},
		{"an account through two levels of teams", a.ListAccount(ivan, accountID("5005")), true},
		{"a malformed account id", a.ListAccount(alice, accountID("10/01")), false},
		{"a project through a team", a.ListProject(carol, projectKey("PROJ")), true},
		{"a project where carol holds one plan only", a.ListProject(carol, projectKey("WEB")), false},
		{"carol's plan", a.ListPlan(carol, planKey("WEB", "NIGHTLY")), true},
		{"a sibling plan", a.ListPlan(carol, planKey("WEB", "RELEASE")), false},
		{"a plan of a project granted whole", a.ListPlan(carol, planKey("PROJ", "ANY")), true},
	} {
		if c.got != c.want {
			t.Errorf("%s: listed %v, want %v", c.name, c.got, c.want)
		}
	}
	if got := policytest.CounterValue(shown) - shownBefore; got != 5 {
		t.Errorf("shown entries counted %v, want 5", got)
	}
	if got := policytest.CounterValue(hidden) - hiddenBefore; got != 4 {
		t.Errorf("hidden entries counted %v, want 4", got)
	}
	if got := policytest.CounterValue(denied) - deniedBefore; got != 0 {
		t.Errorf("hidden list entries counted as %v denials", got)
	}
}
