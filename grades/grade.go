// Package grades holds the grade domain rules (the letter scale, versions and
// their ETags) and the Redis store behind /student/{id}/english/grade
// (docs/contract.md §4).
//
// Every change (create, update, seed) is one Lua script: it reads the current
// record, checks existence and version, writes the new record and appends the
// audit entry, so concurrent writers cannot interleave and a refused change
// leaves nothing behind. Authorization and HTTP mapping happen elsewhere,
// before these functions are called. Student ids and grades arrive parsed
// (facade.StudentID, Grade), so nothing malformed can reach a Redis key;
// only the subject, which no client sends, is checked here.
package grades

import (
	"slices"

	"github.com/facade-dev/facade"
)

// SubjectEnglish is the only subject the API serves today.
const SubjectEnglish = "english"

// scale is the grading scale, best first, written once: ParseGrade
// accepts exactly these, and every other copy is made from Scale (the
// problem sentences of server/problem; the GradeValue enum of
// api/openapi.json and the page's grade menu, written by
// tools/gencodes, whose tests fail when a copy drifts).
var scale = [...]string{"A+", "A", "A-", "B+", "B", "B-", "C+", "C", "C-", "D+", "D", "D-", "F"}

// Scale returns the grades of the scale, best first. It is a copy:
// changing it changes no rule.
func Scale() []string { return slices.Clone(scale[:]) }

// Grade is one of the grades of the scale, made only by ParseGrade. The
// zero value is no grade (String is "").
type Grade struct{ s string }

// String is the grade as written and stored ("B+").
func (g Grade) String() string { return g.s }

// IsZero reports whether g is the zero Grade, which no parse returns.
func (g Grade) IsZero() bool { return g.s == "" }

// ParseGrade returns s as a Grade when it is exactly one of the grades of
// the scale. There is no trimming and no case folding: "a+" or " A" are
// refused, so what is stored is always what the client will read back.
func ParseGrade(s string) (Grade, error) {
	if slices.Contains(scale[:], s) {
		return Grade{s}, nil
	}
	return Grade{}, NotOnScale
}

// NotOnScale is the refusal of a grade that is not one of the scale's
// letters, naming the body's grade field.
var NotOnScale = facade.Refuse(facade.ErrBadGrade, "grade", facade.ReasonNotOnScale)
