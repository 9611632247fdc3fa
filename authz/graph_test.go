package authz

import (
	"errors"
	"slices"
	"strconv"
	"testing"
)

func linked(t testing.TB, links ...[2]string) *graph {
	t.Helper()
	g := newGraph()
	for _, l := range links {
		if err := g.AddLink(l[0], l[1]); err != nil {
			t.Fatal(err)
		}
	}
	return g
}

func TestGraphFollowsGroupsAtAnyDepthAndSurvivesCycles(t *testing.T) {
	var links [][2]string
	for i := 0; i < 20; i++ { // deeper than casbin's default limit of 10
		links = append(links, [2]string{"team:" + strconv.Itoa(i), "team:" + strconv.Itoa(i+1)})
	}
	links = append(links,
		[2]string{"user:ann", "team:0"},
		[2]string{"team:20", "project:P view"},
		[2]string{"team:20", "team:0"}, // a cycle back to the start
	)
	g := linked(t, links...)
	g.freeze()
	if !g.reaches("user:ann", "project:P view") {
		t.Error("ann does not reach a grant 21 groups up")
	}
	if g.reaches("user:ann", "project:Q view") || g.reaches("user:bob", "project:P view") {
		t.Error("a walk found a grant that does not exist")
	}
	if !g.reaches("x", "x") {
		t.Error("a name must reach itself, as in casbin")
	}
	if p := g.path("user:ann", "project:P view"); len(p) != 23 || p[0] != "user:ann" || p[22] != "project:P view" {
		t.Errorf("path = %v", p)
	}
}

func TestGraphIsImmutableOnceFrozen(t *testing.T) {
	g := linked(t, [2]string{"a", "b"})
	g.freeze()
	for _, err := range []error{g.AddLink("a", "c"), g.DeleteLink("a", "b"), g.Clear()} {
		if !errors.Is(err, errFrozen) {
			t.Errorf("mutating a frozen graph: %v, want errFrozen", err)
		}
	}
	if !g.reaches("a", "b") {
		t.Error("a link was lost")
	}
}

func TestGraphRoleManagerQueries(t *testing.T) {
	g := linked(t,
		[2]string{"student:al", "class:c1"}, [2]string{"student:al", "class:c2"},
		[2]string{"student:bo", "class:c1"}, [2]string{"student:al", "class:c1"}) // duplicate
	if got, _ := g.GetRoles("student:al"); !slices.Equal(got, []string{"class:c1", "class:c2"}) {
		t.Errorf("GetRoles = %v", got)
	}
	users, _ := g.GetUsers("class:c1")
	slices.Sort(users)
	if !slices.Equal(users, []string{"student:al", "student:bo"}) {
		t.Errorf("GetUsers = %v", users)
	}
	if err := g.DeleteLink("student:al", "class:c1"); err != nil || g.reaches("student:al", "class:c1") {
		t.Errorf("DeleteLink: %v", err)
	}
	if _, err := g.GetRoles("x", "domain"); !errors.Is(err, errDomains) {
		t.Error("domains must be refused, not ignored")
	}
	if g.links() != 2 {
		t.Errorf("links = %d, want 2", g.links())
	}
}

// BenchmarkGraphBigTeam: a member of a team holding 10,000 grants asks for
// one it lacks. The walk visits groups, not grants, so this costs what a
// small team costs.
func BenchmarkGraphBigTeam(b *testing.B) {
	g := newGraph()
	_ = g.AddLink("user:m", "team:big")
	for i := range 10000 {
		_ = g.AddLink("team:big", "project:P"+strconv.Itoa(i)+" view")
	}
	g.freeze()
	for b.Loop() {
		if g.reaches("user:m", "project:MISSING view") {
			b.Fatal("allow")
		}
	}
}
