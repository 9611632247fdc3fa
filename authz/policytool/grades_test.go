package policytool

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	facade "github.com/facade-dev/facade"
	"github.com/facade-dev/facade/authz"
	"github.com/facade-dev/facade/authz/internal/policytest"
)

// TestExplainAnswersTheGradeQuestionAsTheServiceDoes: over random
// policies with enrollments, class grants, roles by line and by group,
// and principals of every kind of role, Explain's verdict on a grade is
// the Authorizer's.
func TestExplainAnswersTheGradeQuestionAsTheServiceDoes(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 29))
	asked := 0
	for range 30 {
		lines := randomGradePolicy(rng)
		_, policyPath := policytest.Files(t, lines...)
		a, err := authz.New(filepath.Join(filepath.Dir(policyPath), "model.conf"), policyPath, authz.Config{Log: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		pol, err := Open(filepath.Join(filepath.Dir(policyPath), "model.conf"), policyPath)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range gradePrincipals {
			for _, s := range gradeStudents {
				for _, act := range []string{authz.ActView, authz.ActUpdate} {
					want := a.CanViewGrade(p, policytest.StudentID(s))
					if act == authz.ActUpdate {
						want = a.CanWriteGrade(p, policytest.StudentID(s))
					}
					x, err := pol.Explain(p, authz.PrefixStudent+s, act)
					if err != nil || x.Allow != want {
						t.Fatalf("%+v %s student:%s: explain %v (%v), service %v\n%s\n%s", p, act, s, x.Allow, err, want,
							strings.Join(x.Lines(), "\n"), strings.Join(lines, "\n"))
					}
					asked++
				}
			}
		}
	}
	t.Logf("%d grade questions", asked)
}

// gradePrincipals and gradeStudents are who asks and about whom in the
// generated grade policies: token roles of every kind, groups from a
// provider, an id shaped like a group.
var (
	gradePrincipals = []facade.Principal{
		{ID: "pat"}, {ID: "pat", Role: "professor"}, {ID: "pat", Role: "student"}, {ID: "pat", Role: "developer"},
		{ID: "sue", Groups: []string{"english-graders"}}, {ID: "sue", Role: "student", Groups: []string{"english-graders"}},
		{ID: "s1", Role: "student"}, {ID: "s1"}, {ID: "s2", Groups: []string{"Domain Users"}},
		{ID: "kim", Groups: []string{"acme:staff", "english-graders"}}, {ID: "team:staff"}, {ID: "team:staff", Role: "professor"},
	}
	gradeStudents = []string{"s1", "s2", "s3"}
)

// randomGradePolicy draws enrollments, class grants (view, update) to
// principals, teams and token groups, and role lines (professor, student)
// to principals, teams and groups, nested.
func randomGradePolicy(rng *rand.Rand) []string {
	subjects := []string{"pat", "sue", "kim", "s1", "s2", "team:staff", "group:english-graders", `"group:Domain Users"`, "group:acme:staff"}
	var lines []string
	for range 1 + rng.IntN(6) {
		lines = append(lines, fmt.Sprintf("g, student:%s, class:%s", policytest.Pick(rng, gradeStudents), policytest.Pick(rng, []string{"c1", "c2"})))
	}
	for range 1 + rng.IntN(8) {
		lines = append(lines, fmt.Sprintf("p, %s, %s, %s", policytest.Pick(rng, subjects), policytest.Pick(rng, []string{"class:c1", "class:c2", "student:s1", "student:s3"}), policytest.Pick(rng, []string{authz.ActView, authz.ActUpdate})))
	}
	for range rng.IntN(6) {
		lines = append(lines, fmt.Sprintf("g, %s, %s", policytest.Pick(rng, subjects), policytest.Pick(rng, []string{"role:professor", "role:student", "team:staff", "role:professor"})))
	}
	return lines
}
