package authz

import (
	"testing"

	facade "github.com/facade-dev/facade"
)

// TestHoldingsFollowGrantsGroupsAndLinks: /auth/me's "has" comes from
// allow rows the principal reaches directly, through a token group, or
// through g links; deny rows and other people's rows give nothing.
func TestHoldingsFollowGrantsGroupsAndLinks(t *testing.T) {
	a, _ := newAuthorizer(t, append(groupPolicy,
		"p, dee, class:english-101, update",
		"p, bob, class:english-101, view",
		"g, student:alice, class:english-101",
		"g, group:english-graders, role:professor",
		"p, group:english-graders, class:english-101, view",
	)...)
	cases := []struct {
		p    facade.Principal
		want Holdings
	}{
		{facade.Principal{ID: "ann"}, Holdings{Builds: true}},
		{facade.Principal{ID: "zoe", Groups: []string{"devs"}}, Holdings{Builds: true}},
		{facade.Principal{ID: "yan", Groups: []string{"ops"}}, Holdings{Accounts: true}},
		{facade.Principal{ID: "dee"}, Holdings{}},
		{facade.Principal{ID: "nobody", Groups: []string{"acme:payments"}}, Holdings{}},
		{facade.Principal{ID: "bob", Role: facade.RoleProfessor}, Holdings{Classes: true}},
		{facade.Principal{ID: "eve", Role: facade.RoleProfessor}, Holdings{}},
		{facade.Principal{ID: "alice", Role: facade.RoleStudent}, Holdings{Classes: true}},
		{facade.Principal{}, Holdings{}},
		// A role from the policy (no role claim in the token).
		{facade.Principal{ID: "gail", Groups: []string{"english-graders"}}, Holdings{Classes: true}},
		// view on a class, but no professor role: the grant takes no
		// effect, and the page says so (issue 42).
		{facade.Principal{ID: "bob", Role: "assistant"}, Holdings{ClassesNeedRole: true}},
		{facade.Principal{ID: "bob"}, Holdings{ClassesNeedRole: true}},
	}
	for _, c := range cases {
		if got := a.Holdings(c.p); got != c.want {
			t.Errorf("Holdings(%+v) = %+v, want %+v", c.p, got, c.want)
		}
	}
}
