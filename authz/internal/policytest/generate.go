package policytest

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Scale sizes a generated policy.
type Scale struct {
	Students, ClassesPerStudent, Classes int // enrollments = students * classesPerStudent
	Professors                           int // each teaches classes/professors classes: view + update lines
	AccountHolders                       int // view_account + transfer lines each
	Teams, Depts                         int // users in teams, teams in depts (two levels)
	PlanGrants, ProjectGrants            int // to teams (plans) and depts (projects)
}

// SpecScale is docs/contract.md §3's figure: 100,000 enrollment lines and 10,000
// permission lines (4,000 class + 3,000 account + 3,000 build grants).
var SpecScale = Scale{
	Students: 20000, ClassesPerStudent: 5, Classes: 2000, Professors: 1000,
	AccountHolders: 1500, Teams: 200, Depts: 20, PlanGrants: 2000, ProjectGrants: 1000,
}

// Fixture is a generated policy plus questions whose answer is allow.
type Fixture struct {
	ModelPath, PolicyPath string
	Enrollments, Grants   int
	Accounts              [][2]string // holder, account
	Teaching              [][2]string // professor, a student in one of their classes
	Plans                 [][3]string // user, project, plan visible through team or dept
	Lines                 []string
}

// Generate writes a policy of size s (and the shipped model) into dir.
func Generate(tb testing.TB, dir string, s Scale) *Fixture {
	tb.Helper()
	rng := rand.New(rand.NewPCG(7, 11))
	f := &Fixture{ModelPath: filepath.Join(dir, "model.conf"), PolicyPath: filepath.Join(dir, "policy.csv")}
	add := func(format string, args ...any) { f.Lines = append(f.Lines, fmt.Sprintf(format, args...)) }

	teacherOf := func(class int) int { return class % s.Professors }
	for c := 0; c < s.Classes; c++ {
		add("p, prof%d, class:c%d, view", teacherOf(c), c)
		add("p, prof%d, class:c%d, update", teacherOf(c), c)
		f.Grants += 2
	}
	for st := 0; st < s.Students; st++ {
		for k := 0; k < s.ClassesPerStudent; k++ {
			c := (st*s.ClassesPerStudent + k*7919) % s.Classes // distinct per student
			add("g, student:s%d, class:c%d", st, c)
			f.Enrollments++
			if rng.IntN(50) == 0 {
				f.Teaching = append(f.Teaching, [2]string{"prof" + strconv.Itoa(teacherOf(c)), "s" + strconv.Itoa(st)})
			}
		}
	}
	for h := 0; h < s.AccountHolders; h++ {
		add("p, u%d, account:%d, view_account", h, 100000+h)
		add("p, u%d, account:%d, transfer", h, 100000+h)
		f.Grants += 2
		f.Accounts = append(f.Accounts, [2]string{"u" + strconv.Itoa(h), strconv.Itoa(100000 + h)})
	}
	for t := 0; t < s.Teams; t++ {
		add("g, team:t%d, team:d%d", t, t%s.Depts)
	}
	users := s.Teams * 10
	for u := 0; u < users; u++ {
		add("g, dev%d, team:t%d", u, u%s.Teams)
	}
	for i := 0; i < s.PlanGrants; i++ {
		team, project, plan := i%s.Teams, rng.IntN(500), "P"+strconv.Itoa(i)
		add("p, team:t%d, plan:PRJ%d-%s, view", team, project, plan)
		f.Grants++
		f.Plans = append(f.Plans, [3]string{"dev" + strconv.Itoa(team), "PRJ" + strconv.Itoa(project), plan})
	}
	for i := 0; i < s.ProjectGrants; i++ {
		dept, project := i%s.Depts, 500+i
		add("p, team:d%d, project:PRJ%d, view", dept, project)
		f.Grants++
		f.Plans = append(f.Plans, [3]string{"dev" + strconv.Itoa(dept), "PRJ" + strconv.Itoa(project), "ANY"})
	}
	WriteFile(tb, f.ModelPath, ShippedModel(tb))
	WriteFile(tb, f.PolicyPath, strings.Join(f.Lines, "\n")+"\n")
	return f
}
