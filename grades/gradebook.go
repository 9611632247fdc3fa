package grades

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/internal/csvcell"
)

// A gradebook is a class's grades as CSV (docs/contract.md §4): the
// download has the columns GradebookColumns, an upload needs student_id,
// grade and version (in any order; other columns, such as those of a
// download, are ignored), so a downloaded file can be edited and sent back.

// GradebookColumns is the header of a downloaded gradebook.
// posted is whether the student sees that version ("true"/"false"; empty
// with no grade): an upload ignores it, as any column it does not need.
var GradebookColumns = []string{"student_id", "grade", "version", "updated_at", "updated_by", "posted"}

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
		row := []string{e.StudentID, "", "", "", "", ""}
		if r := e.Record; r != nil {
			row = []string{e.StudentID, r.Grade, strconv.FormatInt(r.Version, 10),
				r.UpdatedAt.UTC().Format(time.RFC3339), r.UpdatedBy, strconv.FormatBool(r.Posted)}
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

// SafeCell is csvcell.Safe: a cell a spreadsheet would run as a formula
// is quoted; ReadGradebook removes the quote again, so a downloaded file
// uploads unchanged.
func SafeCell(s string) string { return csvcell.Safe(s) }

func unsafeCell(s string) string { return csvcell.Unsafe(s) }

// GradebookRow is one data row of an uploaded gradebook. Problem is the
// reason the row cannot be applied whatever is stored (a malformed cell or
// a student named on another line too); nil when it is well formed.
type GradebookRow struct {
	Line      int    // line number in the file, the header being line 1
	StudentID string // as written (a malformed one included, for the answer)
	Grade     string // "" when the cell is empty
	Version   *int64 // nil when the cell is empty: the student has no grade yet
	Problem   *facade.Error
	// student and grade are StudentID and Grade as parsed when the row was
	// read; zero when malformed (Problem) or, for grade, empty.
	student facade.StudentID
	grade   Grade
}

// Student is the row's student id, parsed; the zero StudentID when the
// row's is malformed (Problem says so).
func (r GradebookRow) Student() facade.StudentID { return r.student }

// gradebookColumns are the columns an upload needs.
var gradebookColumns = []string{"student_id", "grade", "version"}

// gradebookSeparators are the separators a header may use: ',' and ';',
// which Excel writes in locales whose decimal mark is a comma.
var gradebookSeparators = []rune{',', ';'}

// MaxHeaderLine bounds a gradebook's header line: a header is a few
// column names, and reading it whole is what lets the separator be chosen
// before any row is read.
const MaxHeaderLine = 64 << 10

// ReadGradebook parses an uploaded gradebook as it streams from body: only
// the rows are kept (every one is checked before any is applied), never
// the file, so a 2 MiB upload holds its rows and a 64 KiB buffer. The
// separator is the one that makes the header line name every needed
// column. A file that could be misread is refused whole with
// facade.ErrBadGradebook: not CSV, a header lacking student_id, grade or
// version, or naming a column twice. Malformed rows, and every row of a
// student named twice, come back with their Problem set. An error of
// body's that is a *facade.Error (the server's size limit) is returned as
// it is.
func ReadGradebook(body io.Reader) ([]GradebookRow, error) {
	br := bufio.NewReaderSize(body, MaxHeaderLine)
	if bom, err := br.Peek(3); err == nil && bytes.Equal(bom, []byte("\uFEFF")) {
		_, _ = br.Discard(3)
	}
	header, err := br.ReadSlice('\n')
	if err != nil && err != io.EOF { // a line past MaxHeaderLine is no spreadsheet's header
		return nil, readError(err)
	}
	header = bytes.Clone(header) // ReadSlice's bytes are the buffer's
	sep, col, err := readGradebookHeader(header)
	if err != nil {
		return nil, err
	}
	r := csv.NewReader(io.MultiReader(bytes.NewReader(header), br))
	r.Comma, r.FieldsPerRecord, r.ReuseRecord = sep, -1, true
	if _, err := r.Read(); err != nil { // the header again: line numbers count it
		return nil, readError(err)
	}
	var rows []GradebookRow
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, readError(err)
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

// readError is a failed read's refusal: the body's own (a size limit)
// as it is, anything else a file that is not CSV.
func readError(err error) error {
	var fe *facade.Error
	if errors.As(err, &fe) {
		return err
	}
	return facade.Wrap(facade.Refuse(facade.ErrBadGradebook, "body", facade.ReasonMalformed), err)
}

// readGradebookHeader reads the header line with each separator in turn
// and returns the separator that names every needed column, with the
// columns' indexes. A header that names a column twice is refused
// whatever the column: which of the two was meant cannot be known.
func readGradebookHeader(line []byte) (rune, map[string]int, error) {
	var refusal *facade.Error
	best := -1
	for _, sep := range gradebookSeparators {
		r := csv.NewReader(bytes.NewReader(line))
		r.Comma, r.FieldsPerRecord = sep, -1
		header, err := r.Read()
		if err != nil && err != io.EOF {
			return 0, nil, facade.Wrap(facade.Refuse(facade.ErrBadGradebook, "body", facade.ReasonMalformed), err)
		}
		col := map[string]int{}
		for i, h := range header {
			name := strings.TrimSpace(h)
			if _, twice := col[name]; twice && name != "" {
				return 0, nil, facade.Refuse(facade.ErrBadGradebook, name, facade.ReasonRepeatedColumn)
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
			return sep, col, nil
		}
		if found > best { // name the column missing under the likelier separator
			best, refusal = found, facade.Refuse(facade.ErrBadGradebook, missing, facade.ReasonMissingColumn)
		}
	}
	return 0, nil, refusal
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
	var err error
	if row.student, err = facade.ParseStudentID(student); err != nil {
		row.Problem = facade.ErrBadIdentifier
		return row
	}
	if grade != "" {
		if row.grade, err = ParseGrade(grade); err != nil {
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
// (nil: the student has no grade). A row whose grade is the one stored is
// unchanged whatever its version (a file uploaded again after it was
// applied); otherwise a version other than the stored one is stale. An
// empty grade cell never removes a grade: it is unchanged for a student
// without one and refused otherwise.
func (r GradebookRow) Decide(cur *Record) (Outcome, *facade.Error) {
	switch {
	case cur != nil && cur.Grade == r.Grade:
		return Unchanged, nil
	case cur == nil && r.Version != nil, cur != nil && (r.Version == nil || *r.Version != cur.Version):
		return Stale, facade.ErrVersionMismatch
	case r.Grade == "" && cur == nil:
		return Unchanged, nil
	case r.Grade == "":
		return Refused, facade.ErrBadGrade
	}
	return Changed, nil
}
