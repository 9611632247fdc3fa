package main

// Reading a seed file (docs/operations.md, "The seed file"): every
// problem with its line and column, so one run lists all of them.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/accounts"
	"github.com/facade-dev/facade/grades"
)

// seedProblem is one thing wrong in a seed file, at its line and column.
type seedProblem struct {
	line, col int
	where     string // "accounts[1]"; empty for the file as a whole
	msg       string
}

func (p seedProblem) before(q seedProblem) bool {
	return p.line < q.line || p.line == q.line && p.col < q.col
}

func (p seedProblem) String() string {
	if p.where == "" {
		return fmt.Sprintf("%d:%d: %s", p.line, p.col, p.msg)
	}
	return fmt.Sprintf("%d:%d: %s: %s", p.line, p.col, p.where, p.msg)
}

// parseSeed decodes and checks a whole seed file and returns every problem
// in it (a syntax error ends the reading; everything else is collected).
func parseSeed(raw []byte) (seedFile, []seedProblem) {
	r := seedReader{raw: raw, dec: json.NewDecoder(bytes.NewReader(raw))}
	r.dec.DisallowUnknownFields()
	f := r.read()
	if !r.fatal {
		r.check(&f)
	}
	sort.SliceStable(r.problems, func(i, j int) bool { return r.problems[i].before(r.problems[j]) })
	return f, r.problems
}

type seedReader struct {
	raw      []byte
	dec      *json.Decoder
	problems []seedProblem
	fatal    bool // the JSON itself is broken: nothing after it is read
	// positions of each entry, for the checks after decoding
	accountAt, gradeAt []int64
}

// problem records a problem of the value that starts at off (after any
// blanks and the comma before it).
func (r *seedReader) problem(off int64, where, format string, args ...any) {
	line, col := position(r.raw, valueStart(r.raw, off))
	r.problems = append(r.problems, seedProblem{line, col, where, fmt.Sprintf(format, args...)})
}

// syntax records a broken document and stops the reading. The decoder's
// own offsets are relative to its buffer; decoding the whole document
// once more gives the offset in the file.
func (r *seedReader) syntax(err error) {
	var whole any
	var se *json.SyntaxError
	off := int64(len(r.raw))
	if errors.As(json.Unmarshal(r.raw, &whole), &se) && se.Offset > 0 && se.Offset < off {
		off = se.Offset - 1 // Offset counts the offending byte
	} else {
		err = errors.New("the file ends early")
	}
	line, col := position(r.raw, off)
	r.problems = append(r.problems, seedProblem{line, col, "", "not valid JSON: " + err.Error()})
	r.fatal = true
}

func (r *seedReader) read() seedFile {
	var f seedFile
	if !r.expectDelim('{', "the file must be a JSON object with \"accounts\" and \"grades\"") {
		return f
	}
	for r.dec.More() && !r.fatal {
		at := r.dec.InputOffset()
		tok, err := r.dec.Token()
		if err != nil {
			r.syntax(err)
			return f
		}
		switch tok {
		case "accounts":
			r.readArray("accounts", func(off int64, where string) {
				var a accounts.SeedAccount
				if r.decodeEntry(&a, off, where) {
					f.Accounts = append(f.Accounts, a)
					r.accountAt = append(r.accountAt, off)
				}
			})
		case "grades":
			r.readArray("grades", func(off int64, where string) {
				var g seedGrade
				if r.decodeEntry(&g, off, where) {
					f.Grades = append(f.Grades, g)
					r.gradeAt = append(r.gradeAt, off)
				}
			})
		default:
			r.problem(at, "", "unknown field %q (the file has \"accounts\" and \"grades\")", tok)
			var skip json.RawMessage
			if err := r.dec.Decode(&skip); err != nil {
				r.syntax(err)
			}
		}
	}
	if !r.fatal {
		if _, err := r.dec.Token(); err != nil { // the closing brace
			r.syntax(err)
		}
	}
	return f
}

func (r *seedReader) expectDelim(d json.Delim, msg string) bool {
	at := r.dec.InputOffset()
	tok, err := r.dec.Token()
	if err != nil {
		r.syntax(err)
		return false
	}
	if tok != d {
		r.problem(at, "", "%s", msg)
		r.fatal = true
		return false
	}
	return true
}

func (r *seedReader) readArray(field string, entry func(off int64, where string)) {
	if !r.expectDelim('[', fmt.Sprintf("%q must be an array", field)) {
		return
	}
	for i := 0; r.dec.More() && !r.fatal; i++ {
		entry(r.dec.InputOffset(), fmt.Sprintf("%s[%d]", field, i))
	}
	if !r.fatal {
		if _, err := r.dec.Token(); err != nil {
			r.syntax(err)
		}
	}
}

// decodeEntry decodes one array element; a wrong type or an unknown field
// is a problem of that entry and the reading goes on.
func (r *seedReader) decodeEntry(v any, off int64, where string) bool {
	err := r.dec.Decode(v)
	var te *json.UnmarshalTypeError
	switch {
	case err == nil:
		return true
	case errors.As(err, &te):
		r.problem(off, where, "%s must be a %s", fieldOr(te.Field, "the entry"), te.Type)
	case isUnknownField(err):
		r.problem(off, where, "%v", err)
	default:
		r.syntax(err)
	}
	return false
}

// check applies the domain's rules to every decoded entry.
func (r *seedReader) check(f *seedFile) {
	seen := map[string]int64{}
	for i, a := range f.Accounts {
		off, where := r.accountAt[i], fmt.Sprintf("accounts[%d]", i)
		parsed, err := a.Account()
		f.accounts = append(f.accounts, parsed)
		if err != nil {
			r.problem(off, where, "%s", accountProblem(a, err))
		} else if first, dup := seen[a.ID]; dup {
			line, _ := position(r.raw, valueStart(r.raw, first))
			r.problem(off, where, "account %q is listed twice (first on line %d)", a.ID, line)
		}
		seen[a.ID] = off
	}
	seen = map[string]int64{}
	for i := range f.Grades {
		g := &f.Grades[i]
		off, where := r.gradeAt[i], fmt.Sprintf("grades[%d]", i)
		if g.Subject == "" {
			g.Subject = grades.SubjectEnglish
		}
		key := g.StudentID + "\x00" + g.Subject
		student, idErr := facade.ParseStudentID(g.StudentID)
		grade, gradeErr := grades.ParseGrade(g.Grade)
		f.grades = append(f.grades, parsedGrade{student, grade})
		switch {
		case idErr != nil || grades.CheckSubject(g.Subject) != nil:
			r.problem(off, where, "student_id %q or subject %q is malformed", g.StudentID, g.Subject)
		case gradeErr != nil:
			scale := grades.Scale()
			r.problem(off, where, "grade %q is not on the scale %s to %s", g.Grade, scale[0], scale[len(scale)-1])
		default:
			if first, dup := seen[key]; dup {
				line, _ := position(r.raw, valueStart(r.raw, first))
				r.problem(off, where, "%s's %s grade is listed twice (first on line %d)", g.StudentID, g.Subject, line)
			}
			seen[key] = off
		}
	}
}

// accountProblem says in words why a seed account was refused.
func accountProblem(a accounts.SeedAccount, err error) string {
	cur, known := accounts.LookupCurrency(a.Currency)
	switch {
	case errors.Is(err, facade.ErrBadIdentifier) && a.Owner == "":
		return "owner is required"
	case errors.Is(err, facade.ErrBadIdentifier):
		return fmt.Sprintf("id %q is not a valid account id", a.ID)
	case !known:
		return fmt.Sprintf("currency %q is not a known ISO 4217 code", a.Currency)
	}
	return fmt.Sprintf("balance %q is not a non-negative amount with at most %d decimals (%s)", a.Balance, cur.Exponent, cur.Code)
}

func isUnknownField(err error) bool {
	return err != nil && strings.HasPrefix(err.Error(), "json: unknown field")
}

func fieldOr(field, def string) string {
	if field == "" {
		return def
	}
	return fmt.Sprintf("%q", field)
}

// valueStart skips the blanks and the comma or colon before a value.
func valueStart(raw []byte, off int64) int64 {
	for off < int64(len(raw)) && strings.IndexByte(" \t\r\n,:", raw[off]) >= 0 {
		off++
	}
	return off
}

// position turns a byte offset into a 1-based line and column.
func position(raw []byte, off int64) (line, col int) {
	off = min(off, int64(len(raw)))
	line, col = 1, 1
	for _, b := range raw[:off] {
		if b == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
