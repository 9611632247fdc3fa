package authz

import (
	"slices"
	"strings"
	"sync"

	facade "github.com/facade-dev/facade"
	"github.com/facade-dev/facade/authz/compiled"
)

// Questions about a class as a whole, for a professor's class view. They
// follow the grade rules: only a professor reaches grades, and each student
// shown is one the professor may view (CanViewGrade), so a deny rule on one
// student is honoured on the class page too.

// CanViewClass: (sub, class:C, view) by a principal of role professor (the
// token's or the policy's).
// The zero ClassID names no class and is allowed nothing.
func (a *Authorizer) CanViewClass(p facade.Principal, classID facade.ClassID) bool {
	return a.count.record(opViewClass, a.force.state().class(p, classID, ActView))
}

// CanPostClass: (sub, class:C, post) by a principal of role professor,
// as CanViewClass asks view: changing the class's posting policy and
// posting its grades (docs/contract.md §4). It needs neither view nor
// update: teaching assistants enter grades, the lecturer releases them.
func (a *Authorizer) CanPostClass(p facade.Principal, classID facade.ClassID) bool {
	return a.count.record(opPostClass, a.force.state().class(p, classID, ActPost))
}

// class asks act on a whole class for a principal of role professor
// (the token's or the policy's); the zero ClassID names no class.
func (st *Loaded) class(p facade.Principal, classID facade.ClassID, act string) bool {
	q := compiled.SubjectOf(p)
	if p.ID != "" && !classID.IsZero() && st.HasRole(p, facade.RoleProfessor) && st.enforce(q, PrefixClass+classID.String(), act) {
		st.usedRole(q, tokenRoleOf(p, facade.RoleProfessor), facade.RoleProfessor)
		return true
	}
	return false
}

// Enrollment is who is enrolled where under one loaded policy: the
// students of a class, the classes of a student. Take it from the
// Authorizer for one request and ask it at once.
type Enrollment struct{ st *Loaded }

// Enrollment answers about the policy in force.
func (a *Authorizer) Enrollment() Enrollment { return Enrollment{a.force.state()} }

// Students returns every student enrolled in classID (g, student:S,
// class:C, directly or through nested groups), sorted, whoever asks:
// posting a class's grades acts on all of them. Ask CanPostClass or
// CanViewClass first.
func (e Enrollment) Students(classID facade.ClassID) []facade.StudentID {
	return e.st.classIndex().students[PrefixClass+classID.String()]
}

// Classes returns the classes studentID is enrolled in, sorted: the
// posting policy of each decides whether a change to the student's grade
// waits for a post (package grades).
func (e Enrollment) Classes(studentID facade.StudentID) []facade.ClassID {
	return e.st.classIndex().classesOf[studentID]
}

// Visible returns the students enrolled in classID whose grade p may
// view, sorted (a deny rule on one student is honoured on the class page
// too). Ask CanViewClass first.
func (e Enrollment) Visible(p facade.Principal, classID facade.ClassID) []facade.StudentID {
	var visible []facade.StudentID
	for _, s := range e.Students(classID) {
		if e.st.grade(p, s.String(), ActView) {
			visible = append(visible, s)
		}
	}
	return visible
}

// MayChangeGrade is CanWriteGrade for marking a class page's rows as
// changeable: a row without change controls is not a refusal, so it is
// counted apart, as list entries are.
func (a *Authorizer) MayChangeGrade(p facade.Principal, studentID facade.StudentID) bool {
	return a.count.listed(a.force.state().grade(p, studentID.String(), ActUpdate))
}

// ClassesVisibleTo returns the classes p may view (see CanViewClass),
// sorted; none for a principal who is not a professor.
func (e Enrollment) ClassesVisibleTo(p facade.Principal) []string {
	st, q := e.st, compiled.SubjectOf(p)
	if p.ID == "" || !st.HasRole(p, facade.RoleProfessor) {
		return nil
	}
	var classes []string
	for _, c := range st.classIndex().classes {
		if st.enforce(q, c, ActView) {
			classes = append(classes, strings.TrimPrefix(c, PrefixClass))
		}
	}
	return classes
}

var (
	opViewClass = newOp("view_class")
	opPostClass = newOp("post_class")
)

// classIndex lists the policy's classes and their enrolled students, built
// once per loaded policy on first use: decisions never need it, only class
// pages do.
type classIndex struct {
	once     sync.Once
	classes  []string                      // every class:C the policy names, sorted
	students map[string][]facade.StudentID // class:C -> student ids enrolled (any depth casbin follows)
	// classesOf is students turned around: student id -> the classes it
	// is enrolled in, sorted.
	classesOf map[facade.StudentID][]facade.ClassID
}

func (st *Loaded) classIndex() *classIndex {
	ix := &st.classes
	ix.once.Do(func() {
		ix.students = map[string][]facade.StudentID{}
		var classes []string
		var links [][2]string
		for _, r := range st.pol.Rules {
			for _, f := range r.Fields {
				if _, err := facade.ParseClassID(strings.TrimPrefix(f, PrefixClass)); err == nil && strings.HasPrefix(f, PrefixClass) {
					classes = append(classes, f)
				}
			}
			if r.Type == "g" || strings.HasPrefix(r.Type, "g") && len(r.Fields) == 2 {
				links = append(links, [2]string{r.Fields[0], r.Fields[1]})
			}
		}
		slices.Sort(classes)
		ix.classes = slices.Compact(classes)
		isClass := map[string]bool{}
		for _, c := range ix.classes {
			isClass[c] = true
		}
		for name, reached := range compiled.Closures(links, isClass) {
			name, ok := strings.CutPrefix(name, PrefixStudent)
			sid, err := facade.ParseStudentID(name)
			if !ok || err != nil {
				continue
			}
			for _, c := range reached {
				ix.students[c] = append(ix.students[c], sid)
			}
		}
		ix.classesOf = map[facade.StudentID][]facade.ClassID{}
		for _, c := range ix.classes { // sorted, so each student's list is too
			cid, _ := facade.ParseClassID(strings.TrimPrefix(c, PrefixClass))
			for _, s := range ix.students[c] {
				ix.classesOf[s] = append(ix.classesOf[s], cid)
			}
		}
		for _, s := range ix.students {
			slices.SortFunc(s, func(a, b facade.StudentID) int { return strings.Compare(a.String(), b.String()) })
		}
	})
	return ix
}
