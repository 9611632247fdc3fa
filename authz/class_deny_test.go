package authz

import (
	"path/filepath"
	"slices"
	"testing"

	facade "github.com/facade-dev/facade"
	"github.com/facade-dev/facade/authz/internal/policytest"
)

// TestClassStudentsHonourDenyRules: under a model with deny rules, a
// professor's class lists only the students whose grade the professor may
// view. A deny line on one enrolled student removes that student from the
// class (and only from the classes of the professor it names); the
// allow-only model can never show this, since there the class grant covers
// every student enrolled.
func TestClassStudentsHonourDenyRules(t *testing.T) {
	dir := t.TempDir()
	modelPath, policyPath := filepath.Join(dir, "model.conf"), filepath.Join(dir, "policy.csv")
	policytest.WriteFile(t, modelPath, policytest.Families["deny-keymatch"])
	policytest.WriteFile(t, policyPath, `p, bob, class:english-101, view, allow
p, erin, class:english-101, view, allow
p, bob, student:zoe, view, deny
g, student:alice, class:english-101
g, student:zoe, class:english-101
g, student:ghost, class:english-101
`)
	a, err := New(modelPath, policyPath, Config{})
	if err != nil {
		t.Fatal(err)
	}
	prof := func(id string) facade.Principal { return facade.Principal{ID: id, Role: facade.RoleProfessor} }
	if !a.CanViewClass(prof("bob"), classID("english-101")) || a.CanViewGrade(prof("bob"), studentID("zoe")) {
		t.Fatal("the fixture does not say what this test assumes: bob views the class but not zoe")
	}
	if got := classStudents(a, prof("bob"), "english-101"); !slices.Equal(got, []string{"alice", "ghost"}) {
		t.Errorf("bob's english-101 lists %v, want [alice ghost]: zoe is denied to him", got)
	}
	if got := classStudents(a, prof("erin"), "english-101"); !slices.Equal(got, []string{"alice", "ghost", "zoe"}) {
		t.Errorf("erin's english-101 lists %v, want every student: the deny names bob only", got)
	}
}
