package grades

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/facade-dev/facade"
)

// A gradebook is a class's grades as CSV (docs/contract.md §4): the
// download has the columns GradebookColumns, an upload needs student_id,
// grade and version (in any order; other columns, such as those of a
// download, are ignored), so a downloaded file can be edited and sent back.

// GradebookColumns is the header of a downloaded gradebook.
var GradebookColumns = []string{"student_id", "grade", "version", "updated_at", "updated_by"}

// GradebookEntry is one enrolled student and their grade (nil: none yet).
type GradebookEntry struct {
	StudentID string
	Record    *Record
}

// WriteGradebook writes entries as CSV under GradebookColumns. Every cell
// goes through SafeCell, so a spreadsheet opening the file runs no formula.
func WriteGradebook(w io.Writer, entries []GradebookEntry) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(GradebookColumns); err != nil {
		return err
	}
	for _, e := range entries {
		row := []string{e.StudentID, "", "", "", ""}
		if r := e.Record; r != nil {
			row = []string{e.StudentID, r.Grade, strconv.FormatInt(r.Version, 10),
				r.UpdatedAt.UTC().Format(time.RFC3339), r.UpdatedBy}
		}
		for i := range row {
			row[i] = SafeCell(row[i])
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// formulaStarts are the first characters that make a spreadsheet read a
// cell as a formula (OWASP, "CSV Injection"). Student ids may start with
// '-' or '@', and grades end in '-' or '+', so this is not hypothetical.
const formulaStarts = "=+-@\t\r"

// SafeCell prefixes a cell that a spreadsheet would run as a formula with
// a single quote, which spreadsheets show as text. ReadGradebook removes
// the quote again, so a downloaded file uploads unchanged.
func SafeCell(s string) string {
	if s != "" && strings.ContainsRune(formulaStarts, rune(s[0])) {
		return "'" + s
	}
	return s
}

func unsafeCell(s string) string {
	if len(s) > 1 && s[0] == '\'' && strings.ContainsRune(formulaStarts, rune(s[1])) {
		return s[1:]
	}
	return s
}

// GradebookRow is one data row of an uploaded gradebook. Problem is the
// reason the row cannot be applied whatever is stored (a malformed cell or
// a student named on another line too); nil when it is well formed.
type GradebookRow struct {
	Line      int    // line number in the file, the header being line 1
	StudentID string // as written (a malformed one included, for the answer)
	Grade     string // "" when the cell is empty
	Version   *int64 // nil when the cell is empty: the student has no grade yet
	Problem   *facade.Error
}

// gradebookColumns are the columns an upload needs.
var gradebookColumns = []string{"student_id", "grade", "version"}

// gradebookSeparators are the separators a header may use: ',' and ';',
// which Excel writes in locales whose decimal mark is a comma.
var gradebookSeparators = []rune{',', ';'}

// ReadGradebook parses an uploaded gradebook. The separator is the one
// that makes the header line name every needed column. A file that could
// be misread is refused whole with facade.ErrBadGradebook: not CSV, a
// header lacking student_id, grade or version, or naming a column twice.
// Malformed rows, and every row of a student named twice, come back with
// their Problem set.
func ReadGradebook(body []byte) ([]GradebookRow, error) {
	body = bytes.TrimPrefix(body, []byte("\uFEFF"))
	r, col, err := readGradebookHeader(body)
	if err != nil {
		return nil, err
	}
	var rows []GradebookRow
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, facade.Wrap(facade.Refuse(facade.ErrBadGradebook, "body", facade.ReasonMalformed), err)
		}
		line, _ := r.FieldPos(0)
		cell := func(name string) string {
			if i := col[name]; i < len(rec) {
				return unsafeCell(strings.TrimSpace(rec[i]))
			}
			return ""
		}
		rows = append(rows, readRow(line, cell("student_id"), cell("grade"), cell("version")))
	}
	refuseDuplicates(rows)
	return rows, nil
}

// readGradebookHeader reads the header line with each separator in turn
// and returns a reader positioned after it, with the needed columns'
// indexes. A header that names a column twice is refused whatever the
// column: which of the two was meant cannot be known.
func readGradebookHeader(body []byte) (*csv.Reader, map[string]int, error) {
	var refusal *facade.Error
	best := -1
	for _, sep := range gradebookSeparators {
		r := csv.NewReader(bytes.NewReader(body))
		r.Comma, r.FieldsPerRecord = sep, -1
		header, err := r.Read()
		if err != nil && err != io.EOF {
			return nil, nil, facade.Wrap(facade.Refuse(facade.ErrBadGradebook, "body", facade.ReasonMalformed), err)
		}
		col := map[string]int{}
		for i, h := range header {
			name := strings.TrimSpace(h)
			if _, twice := col[name]; twice && name != "" {
				return nil, nil, facade.Refuse(facade.ErrBadGradebook, name, facade.ReasonRepeatedColumn)
			}
			col[name] = i
		}
		missing, found := "", 0
		for _, need := range gradebookColumns {
			if _, ok := col[need]; ok {
				found++
			} else if missing == "" {
				missing = need
			}
		}
		if missing == "" {
			return r, col, nil
		}
		if found > best { // name the column missing under the likelier separator
			best, refusal = found, facade.Refuse(facade.ErrBadGradebook, missing, facade.ReasonMissingColumn)
		}
	}
	return nil, nil, refusal
}

// refuseDuplicates refuses every well-formed row whose student is named
// on another line too (a row refused for its own reason keeps it).
func refuseDuplicates(rows []GradebookRow) {
	count := map[string]int{}
	for _, r := range rows {
		count[r.StudentID]++
	}
	for i := range rows {
		if rows[i].Problem == nil && count[rows[i].StudentID] > 1 {
			rows[i].Problem = facade.ErrDuplicateStudent
		}
	}
}

func readRow(line int, student, grade, version string) GradebookRow {
	row := GradebookRow{Line: line, StudentID: student, Grade: grade}
	if !facade.ValidID(student) {
		row.Problem = facade.ErrBadIdentifier
		return row
	}
	if grade != "" {
		if _, err := ParseGrade(grade); err != nil {
			row.Problem = facade.ErrBadGrade
			return row
		}
	}
	if version != "" {
		v, err := strconv.ParseInt(version, 10, 64)
		if err != nil || v < 1 || !canonicalDigits(version) {
			row.Problem = facade.ErrBadParameter
			return row
		}
		row.Version = &v
	}
	return row
}

// Outcome is what a gradebook row did (or, in a dry run, would do).
type Outcome string

// Outcomes of a gradebook row.
const (
	Changed   Outcome = "changed"   // the grade was (would be) created or replaced
	Unchanged Outcome = "unchanged" // the row says what is stored
	Stale     Outcome = "stale"     // the row's version is not the stored one: someone changed it since
	Refused   Outcome = "refused"   // malformed, or not the caller's to change
)

// Decide says what a well-formed row would do against the stored record
// (nil: the student has no grade). An empty grade cell never removes a
// grade: it is unchanged for a student without one and refused otherwise.
func (r GradebookRow) Decide(cur *Record) (Outcome, *facade.Error) {
	switch {
	case cur == nil && r.Version != nil, cur != nil && (r.Version == nil || *r.Version != cur.Version):
		return Stale, facade.ErrVersionMismatch
	case r.Grade == "" && cur == nil:
		return Unchanged, nil
	case r.Grade == "":
		return Refused, facade.ErrBadGrade
	case cur != nil && cur.Grade == r.Grade:
		return Unchanged, nil
	}
	return Changed, nil
}

// ApplyRow writes a row Decide found Changed, with the row's version as
// If-Match (none: the grade is created). A change someone made in between
// makes the row Stale, with the record as it now stands when there is one.
func (s *Store) ApplyRow(ctx context.Context, r GradebookRow, subject, by string) (Outcome, Record, error) {
	var rec Record
	var err error
	if r.Version == nil {
		rec, err = s.Create(ctx, r.StudentID, subject, r.Grade, by)
	} else {
		rec, err = s.Update(ctx, r.StudentID, subject, r.Grade, by, r.Version)
	}
	switch {
	case errors.Is(err, facade.ErrGradeExists), errors.Is(err, facade.ErrVersionMismatch), errors.Is(err, facade.ErrNotFound):
		cur, gerr := s.Get(ctx, r.StudentID, subject)
		if gerr != nil && !errors.Is(gerr, facade.ErrNotFound) {
			return "", Record{}, gerr
		}
		return Stale, cur, nil
	case err != nil:
		return "", Record{}, err
	case r.Version != nil && rec.Version == *r.Version:
		return Unchanged, rec, nil // the grade was set to this value in between
	}
	return Changed, rec, nil
}
