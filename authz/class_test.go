package authz

import (
	"slices"
	"testing"

	facade "github.com/facade-dev/facade"
)

// TestClassQuestions: who may view a class, who is enrolled in it, and
// which classes a professor sees, agree with the grade rules.
func TestClassQuestions(t *testing.T) {
	a, _ := newAuthorizer(t,
		"p, bob, class:english-101, view",
		"p, bob, class:english-101, update",
		"p, erin, class:english-101, view",
		"p, team:history, class:history-201, view",
		"g, frank, team:inner",
		"g, team:inner, team:history",
		"p, carol, class:english-101, view",
		"p, ursula, class:math-301, update",
		"g, student:zoe, class:english-101",
		"g, student:alice, class:english-101",
		"g, student:alice, class:history-201",
		"g, student:dave, class:history-201",
	)
	prof := func(id string) facade.Principal { return facade.Principal{ID: id, Role: facade.RoleProfessor} }
	cases := []struct {
		p     facade.Principal
		class string
		want  bool
	}{
		{prof("bob"), "english-101", true},
		{prof("erin"), "english-101", true},
		{prof("frank"), "history-201", true}, // through two groups
		{prof("bob"), "history-201", false},
		{prof("ursula"), "math-301", false}, // update alone is not view
		{prof("nobody"), "english-101", false},
		{prof("team:history"), "history-201", false}, // a sub is never a group
		{facade.Principal{ID: "carol", Role: "developer"}, "english-101", false},
		{facade.Principal{ID: "bob", Role: facade.RoleStudent}, "english-101", false},
		{facade.Principal{ID: "bob"}, "english-101", false},
		{prof("bob"), "english-101 update", false},
		{prof("bob"), "", false},
	}
	for _, c := range cases {
		if got := a.CanViewClass(c.p, classID(c.class)); got != c.want {
			t.Errorf("CanViewClass(%v, %q) = %v, want %v", c.p, c.class, got, c.want)
		}
	}
	if got := classStudents(a, prof("bob"), "english-101"); !slices.Equal(got, []string{"alice", "zoe"}) {
		t.Errorf("english-101 students: %v", got)
	}
	if got := classStudents(a, prof("frank"), "history-201"); !slices.Equal(got, []string{"alice", "dave"}) {
		t.Errorf("history-201 students: %v", got)
	}
	if got := classStudents(a, prof("ursula"), "math-301"); len(got) != 0 {
		t.Errorf("math-301 students: %v", got)
	}
	erins := classStudents(a, prof("erin"), "english-101")
	if !slices.Equal(erins, []string{"alice", "zoe"}) {
		t.Errorf("erin's english-101 students: %v", erins)
	}
	for _, s := range erins {
		if !a.CanViewGrade(prof("erin"), studentID(s)) {
			t.Errorf("erin views english-101 but not %s's grade", s)
		}
	}
	lists := []struct {
		p    facade.Principal
		want []string
	}{
		{prof("bob"), []string{"english-101"}},
		{prof("frank"), []string{"history-201"}},
		{prof("ursula"), nil},
		{prof("nobody"), nil},
		{facade.Principal{ID: "carol", Role: "developer"}, nil},
	}
	for _, l := range lists {
		if got := a.Enrollment().ClassesVisibleTo(l.p); !slices.Equal(got, l.want) {
			t.Errorf("ClassesVisibleTo(%v) = %v, want %v", l.p, got, l.want)
		}
	}
}
