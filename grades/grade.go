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
	"strconv"
	"strings"

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

// maxIfMatchLen bounds the header we bother to parse; a version tag is at most
// 19 digits plus quotes and the weak prefix.
const maxIfMatchLen = 64

// ETag returns the entity tag of a record version, e.g. `"3"`.
func ETag(version int64) string {
	return `"` + strconv.FormatInt(version, 10) + `"`
}

// ParseIfMatch reads an If-Match header into the version it requires.
//
//   - "" (no header) and "*" return nil: the update proceeds on whatever
//     version exists. "*" means "any current representation", and Update
//     already refuses a grade that does not exist, so nil says exactly that.
//   - `"3"`, `"3-unposted"` (StaffETag) and `W/"3"` return 3: posting
//     does not change the grade, so a tag read before a post still
//     matches after it. Weak tags are accepted on purpose: our tags
//     are versions, hence strong in fact, and proxies (nginx gzip, for one)
//     weaken ETags on the way to the client.
//   - Surrounding spaces and tabs are ignored (HTTP optional whitespace).
//
// Anything else is ErrBadIfMatch: "unquoted" for a value without any
// quote (`3`, the commonest slip: the tag is the quoted string), else
// "malformed": a tag that is not a version we could have issued (`"abc"`,
// `"03"`, `"-1"`), a missing quote, or a list of several tags (the API
// only ever issues one tag per record).
func ParseIfMatch(h string) (*int64, error) {
	h = strings.Trim(h, " \t")
	if h == "" || h == "*" {
		return nil, nil
	}
	bad := facade.Refuse(facade.ErrBadIfMatch, "If-Match", facade.ReasonMalformed)
	if !strings.Contains(h, `"`) {
		return nil, facade.Refuse(facade.ErrBadIfMatch, "If-Match", facade.ReasonUnquoted)
	}
	if len(h) > maxIfMatchLen {
		return nil, bad
	}
	h = strings.TrimPrefix(h, "W/")
	if len(h) < 3 || h[0] != '"' || h[len(h)-1] != '"' {
		return nil, bad
	}
	digits := strings.TrimSuffix(h[1:len(h)-1], unpostedSuffix) // StaffETag's tag of an unposted version
	if !canonicalDigits(digits) {
		return nil, bad
	}
	v, err := strconv.ParseInt(digits, 10, 64)
	if err != nil { // overflow
		return nil, bad
	}
	return &v, nil
}

// canonicalDigits reports whether s is a decimal number as ETag writes it:
// ASCII digits only, no sign, no leading zero. Requiring the canonical form
// keeps one version to one tag, so the comparison in Redis can be textual.
func canonicalDigits(s string) bool {
	if s == "" || (s[0] == '0' && len(s) > 1) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
