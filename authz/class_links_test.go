package authz

import (
	"path/filepath"
	"slices"
	"testing"

	facade "github.com/facade-dev/facade"
	"github.com/facade-dev/facade/authz/internal/policytest"
)

// TestClassPageListsOnlyEnrolledStudents: a class page lists the students
// enrolled in the class (g lines, at any depth), not a student whose group
// merely holds a grant on the class: casbin answers the grade question
// through g links only, and a p line is no enrollment.
func TestClassPageListsOnlyEnrolledStudents(t *testing.T) {
	a, _ := newAuthorizer(t,
		"p, bob, class:english-101, view",
		"p, bob, class:math-201, view",
		"g, student:alice, class:english-101",
		"g, student:dave, class:math-201",
		"# alice tutors math: her group may view the class, she is not enrolled in it",
		"g, student:alice, group:math-tutors",
		"p, group:math-tutors, class:math-201, view",
	)
	bob := facade.Principal{ID: "bob", Role: facade.RoleProfessor}
	if got := classStudents(a, bob, "math-201"); !slices.Equal(got, []string{"dave"}) {
		t.Errorf("math-201 lists %v, want [dave]", got)
	}
	if got := classStudents(a, bob, "english-101"); !slices.Equal(got, []string{"alice"}) {
		t.Errorf("english-101 lists %v, want [alice]", got)
	}
}

// TestClassPageFollowsResourceGroupEnrollment: in a model whose objects
// are grouped by g2 (model.conf: "g2..."), an enrollment is a g2 line, and
// the class page lists the students the professor's grade question
// reaches through it, as casbin answers it.
func TestClassPageFollowsResourceGroupEnrollment(t *testing.T) {
	modelPath, policyPath := policytest.Files(t,
		"p, bob, class:english-101, view",
		"g2, student:alice, class:english-101",
		"g2, student:zoe, class:english-101",
	)
	policytest.WriteFile(t, modelPath, `[request_definition]
r = sub, obj, act
[policy_definition]
p = sub, obj, act
[role_definition]
g = _, _
g2 = _, _
[policy_effect]
e = some(where (p.eft == allow))
[matchers]
m = g(r.sub, p.sub) && g2(r.obj, p.obj) && r.act == p.act
`)
	a, err := New(modelPath, policyPath, Config{})
	if err != nil {
		t.Fatalf("New(%s): %v", filepath.Base(modelPath), err)
	}
	bob := facade.Principal{ID: "bob", Role: facade.RoleProfessor}
	if !a.CanViewGrade(bob, studentID("alice")) {
		t.Fatal("bob may not view alice's grade through her g2 enrollment")
	}
	if got := classStudents(a, bob, "english-101"); !slices.Equal(got, []string{"alice", "zoe"}) {
		t.Errorf("english-101 lists %v, want [alice zoe]", got)
	}
}
