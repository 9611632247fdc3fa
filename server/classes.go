package server

import (
	"bytes"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/grades"
	"github.com/facade-dev/facade/server/problem"
)

// defaultClassPage is how many students a class page holds when the caller
// does not say.
const defaultClassPage = 50

type classLink struct {
	ClassID string `json:"class_id"`
	Grades  string `json:"grades"` // the path of the class's grade list
}

type classesView struct {
	Classes []classLink `json:"classes"`
}

// studentGrade is one enrolled student: the grade record's fields, with
// grade null (and no version) for a student who has none yet.
type studentGrade struct {
	StudentID string     `json:"student_id"`
	Grade     *string    `json:"grade"`
	Version   int64      `json:"version,omitempty"`
	UpdatedAt *time.Time `json:"updated_at,omitempty"`
	UpdatedBy string     `json:"updated_by,omitempty"`
	Posted    *bool      `json:"posted,omitempty"` // whether its student sees this version; absent with no grade
	CanChange bool       `json:"can_change"`       // the caller may set or change this grade
}

type classGradesView struct {
	ClassID  string         `json:"class_id"`
	Subject  string         `json:"subject"`
	Size     int            `json:"size"` // students enrolled, on every page
	Start    int            `json:"start"`
	Limit    int            `json:"limit"`
	Students []studentGrade `json:"students"`
	Next     string         `json:"next,omitempty"` // the next page's path, when there is one
}

// listClasses answers the classes the caller may view (a professor's
// classes; an empty list for anyone else), so a client can offer them.
func (h *gradeHandlers) listClasses(c echo.Context) error {
	view := classesView{Classes: []classLink{}}
	for _, id := range h.az.Enrollment().ClassesVisibleTo(principal(c)) {
		view.Classes = append(view.Classes, classLink{ClassID: id, Grades: classGradesPath(id)})
	}
	return c.JSON(http.StatusOK, view)
}

// getClassGrades answers the students enrolled in a class, sorted by id and
// paged, with their english grades, for a principal with view on the class;
// with Accept: text/csv, the whole class as a gradebook (getClassGradebook).
func (h *gradeHandlers) getClassGrades(c echo.Context) error {
	limit, err := pageLimit(c.QueryParam("limit"), defaultClassPage, maxPageLimit)
	if err != nil {
		return err
	}
	start, err := pageStart(c.QueryParam("start"))
	if err != nil {
		return err
	}
	class, err := pathID(c, classParam, facade.ParseClassID)
	if err != nil {
		return err
	}
	accept := acceptOf(c.Request())
	csv := accept.asksFor("text/csv")
	if !csv && !accept.admitsJSON() {
		return facade.ErrNotAcceptable
	}
	if err := h.authorizeClass(c, "class.view", class); err != nil {
		return err
	}
	if csv {
		return h.getClassGradebook(c, class)
	}
	enrolled := h.az.Enrollment().Visible(principal(c), class)
	// Bounds from lengths only: start may be any int a client wrote.
	lo := min(start, len(enrolled))
	hi := lo + min(limit, len(enrolled)-lo)
	page := enrolled[lo:hi]
	recs, err := h.recordsAsSeen(c, page)
	if err != nil {
		return err
	}
	view := classGradesView{ClassID: class.String(), Subject: grades.SubjectEnglish, Size: len(enrolled),
		Start: start, Limit: limit, Students: make([]studentGrade, len(page))}
	for i, id := range page {
		view.Students[i] = studentGrade{StudentID: id.String()}
		if rec, ok := recs[id]; ok {
			view.Students[i] = studentGrade{StudentID: id.String(), Grade: &rec.Grade, Version: rec.Version,
				UpdatedAt: &rec.UpdatedAt, UpdatedBy: rec.UpdatedBy, Posted: &rec.Posted}
		}
		view.Students[i].CanChange = h.az.MayChangeGrade(principal(c), id)
	}
	if hi < len(enrolled) {
		view.Next = classGradesPath(class.String()) + "?" + url.Values{
			"start": {strconv.Itoa(hi)}, "limit": {strconv.Itoa(limit)},
		}.Encode()
	}
	return c.JSON(http.StatusOK, view)
}

// authorizeClass asks authz whether the caller may view class, for op
// (reading its grades, uploading a gradebook: each row is then decided on
// its own student).
func (h *gradeHandlers) authorizeClass(c echo.Context, op string, class facade.ClassID) error {
	return h.authorize(c, question{op: op,
		allow:  func(p facade.Principal) bool { return h.az.CanViewClass(p, class) },
		target: func() string { return "class:" + class.String() }})
}

// recordsAsSeen reads the grades of ids (students the caller may view) as
// the caller sees them: every list of a class (page, gradebook, summary)
// reads through here, so none can show the caller's own unposted grade.
func (h *gradeHandlers) recordsAsSeen(c echo.Context, ids []facade.StudentID) (map[facade.StudentID]grades.Record, error) {
	recs, err := h.grades.GetMany(c.Request().Context(), ids, grades.SubjectEnglish)
	if err != nil {
		return nil, err
	}
	return recs, h.ownAsStudent(c, recs)
}

// ownAsStudent replaces, in recs, the caller's own grade, if it is there,
// by the grade as its student sees it (readsAsStudent): one sees one's own
// grade as released even in a class one helps teach. One read, and only
// when the caller is enrolled.
func (h *gradeHandlers) ownAsStudent(c echo.Context, recs map[facade.StudentID]grades.Record) error {
	own, err := facade.ParseStudentID(principal(c).ID)
	if err != nil {
		return nil // an id no student has
	}
	if _, ok := recs[own]; !ok {
		return nil
	}
	rec, err := h.grades.GetPosted(c.Request().Context(), own, grades.SubjectEnglish, nil)
	switch {
	case errors.Is(err, facade.ErrGradeNotPosted), errors.Is(err, facade.ErrNotFound):
		delete(recs, own)
	case err != nil:
		return err
	default:
		recs[own] = rec
	}
	return nil
}

func classGradesPath(class string) string { return "/class/" + url.PathEscape(class) + "/grades" }

// getClassGradebook answers every enrolled student the caller may view,
// as a CSV gradebook (docs/contract.md §4). Authorization is checked by
// getClassGrades before it hands over.
func (h *gradeHandlers) getClassGradebook(c echo.Context, class facade.ClassID) error {
	enrolled := h.az.Enrollment().Visible(principal(c), class)
	recs, err := h.recordsAsSeen(c, enrolled)
	if err != nil {
		return err
	}
	entries := make([]grades.GradebookEntry, len(enrolled))
	for i, id := range enrolled {
		entries[i] = grades.GradebookEntry{StudentID: id.String()}
		if rec, ok := recs[id]; ok {
			entries[i].Record = &rec
		}
	}
	var buf bytes.Buffer
	if err := grades.WriteGradebook(&buf, entries); err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderContentDisposition, `attachment; filename="`+class.String()+`-grades.csv"`)
	return c.Blob(http.StatusOK, "text/csv; charset=utf-8", buf.Bytes())
}

// gradebookRow is one row's outcome in the answer to an upload.
type gradebookRow struct {
	Line          int            `json:"line"`
	StudentID     string         `json:"student_id"`
	Grade         string         `json:"grade"`
	Outcome       grades.Outcome `json:"outcome"`
	Code          string         `json:"code,omitempty"`           // why a row is stale or refused
	PreviousGrade *string        `json:"previous_grade,omitempty"` // the grade stored before the row
	Version       int64          `json:"version,omitempty"`        // the stored version: the new one for a row applied, else as it stands
	UpdatedBy     string         `json:"updated_by,omitempty"`     // for a stale row: who made the stored version
	UpdatedAt     *time.Time     `json:"updated_at,omitempty"`
}

type gradebookView struct {
	ClassID   string         `json:"class_id"`
	DryRun    bool           `json:"dry_run"`
	Changed   int            `json:"changed"`
	Unchanged int            `json:"unchanged"`
	Stale     int            `json:"stale"`
	Refused   int            `json:"refused"`
	Rows      []gradebookRow `json:"rows"`
}

// uploadGradebook applies a CSV gradebook to a class (docs/contract.md §4).
// Every row is checked first (format, enrollment, permission, version);
// ?dry_run=1 stops there. Otherwise each row that would change is written
// with its version as If-Match, and a change made in between makes it
// stale. The answer lists every row's outcome with its line.
func (h *gradeHandlers) uploadGradebook(c echo.Context) error {
	body, err := csvBody(c.Request())
	if err != nil {
		return err
	}
	dryRun, err := dryRunParam(c.Request().URL.RawQuery)
	if err != nil {
		return err
	}
	rows, err := grades.ReadGradebook(body)
	if err != nil {
		return err
	}
	class, err := pathID(c, classParam, facade.ParseClassID)
	if err != nil {
		return err
	}
	if err := h.authorizeClass(c, "class.upload", class); err != nil {
		return err
	}
	view := gradebookView{ClassID: class.String(), DryRun: dryRun, Rows: make([]gradebookRow, len(rows))}
	plan, err := h.checkGradebook(c, class, rows, view.Rows)
	if err != nil {
		return err
	}
	if !dryRun {
		if err := h.applyGradebook(c, rows, plan, view.Rows); err != nil {
			return err
		}
	}
	for i := range view.Rows {
		view.count(view.Rows[i].Outcome)
	}
	return c.JSON(http.StatusOK, view)
}

// checkGradebook fills out[i] with what row i would do and reports which
// rows would change. Nothing is written.
func (h *gradeHandlers) checkGradebook(c echo.Context, class facade.ClassID, rows []grades.GradebookRow, out []gradebookRow) ([]bool, error) {
	p := principal(c)
	inClass := map[facade.StudentID]bool{}
	for _, id := range h.az.Enrollment().Visible(p, class) {
		inClass[id] = true
	}
	var ids []facade.StudentID
	for i, r := range rows {
		out[i] = gradebookRow{Line: r.Line, StudentID: r.StudentID, Grade: r.Grade}
		switch {
		case r.Problem != nil:
			out[i].refuse(r.Problem)
		case !inClass[r.Student()]:
			out[i].refuse(facade.ErrNotInClass)
		case !h.az.CanWriteGrade(p, r.Student()):
			_ = h.refuse(c, "grade.write", "student:"+r.StudentID)
			out[i].refuse(facade.ErrForbidden)
		default:
			ids = append(ids, r.Student())
		}
	}
	recs, err := h.grades.GetMany(c.Request().Context(), ids, grades.SubjectEnglish)
	if err != nil {
		return nil, err
	}
	plan := make([]bool, len(rows))
	for i, r := range rows {
		if out[i].Outcome != "" {
			continue
		}
		var cur *grades.Record
		if rec, ok := recs[r.Student()]; ok {
			cur = &rec
		}
		outcome, why := r.Decide(cur)
		out[i].set(outcome, why, cur)
		plan[i] = outcome == grades.Changed
	}
	return plan, nil
}

// applyGradebook writes the rows plan marks, in pipelines
// (grades.Store.ApplyRows), and records what each did in out.
func (h *gradeHandlers) applyGradebook(c echo.Context, rows []grades.GradebookRow, plan []bool, out []gradebookRow) error {
	var todo []grades.GradebookRow
	var at []int
	for i, r := range rows {
		if plan[i] {
			todo, at = append(todo, r), append(at, i)
		}
	}
	results, err := h.grades.ApplyRows(c.Request().Context(), todo, grades.SubjectEnglish, principal(c).ID, h.az.Enrollment().Classes)
	if err != nil {
		return err
	}
	for j, res := range results {
		out[at[j]].applied(res)
	}
	return nil
}

// applied records what writing the row did.
func (g *gradebookRow) applied(res grades.RowResult) {
	prev := g.PreviousGrade
	var why *facade.Error
	if res.Outcome == grades.Stale {
		why = facade.ErrVersionMismatch
	}
	var cur *grades.Record
	if res.Record.Version > 0 {
		cur = &res.Record
	}
	g.set(res.Outcome, why, cur)
	if res.Outcome == grades.Changed {
		g.PreviousGrade = prev
	}
}

// set records an outcome against the record cur (nil: no grade stored).
func (g *gradebookRow) set(o grades.Outcome, why *facade.Error, cur *grades.Record) {
	g.Outcome, g.Code = o, ""
	if why != nil {
		g.Code = problem.Wire(why.Code)
	}
	g.PreviousGrade, g.Version, g.UpdatedBy, g.UpdatedAt = nil, 0, "", nil
	if cur != nil {
		grade, at := cur.Grade, cur.UpdatedAt
		g.PreviousGrade, g.Version, g.UpdatedBy, g.UpdatedAt = &grade, cur.Version, cur.UpdatedBy, &at
	}
	if o == grades.Changed && cur != nil && cur.Grade == g.Grade {
		g.PreviousGrade = nil // cur is the new record
	}
}

func (g *gradebookRow) refuse(why *facade.Error) {
	g.Outcome, g.Code = grades.Refused, problem.Wire(why.Code)
}

func (v *gradebookView) count(o grades.Outcome) {
	switch o {
	case grades.Changed:
		v.Changed++
	case grades.Unchanged:
		v.Unchanged++
	case grades.Stale:
		v.Stale++
	default:
		v.Refused++
	}
}

// dryRunParam reads an upload's query: nothing, or one dry_run of 1,
// true, 0 or false. Anything else is refused, never read as "apply"
// (docs/contract.md §4): a misspelt ?dry-run=1 or ?dryRun=1, a repeated
// ?dry_run=0&dry_run=1, a query Go cannot split (a ';') or a bare
// ?dry_run.
func dryRunParam(rawQuery string) (bool, error) {
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return false, facade.Wrap(facade.Refuse(facade.ErrBadParameter, "query", facade.ReasonUnknownParameter), err)
	}
	for name := range q {
		if name != dryRunName {
			return false, facade.Refuse(facade.ErrBadParameter, name, facade.ReasonUnknownParameter)
		}
	}
	switch v := q[dryRunName]; {
	case len(v) == 0:
		return false, nil
	case len(v) > 1:
		return false, facade.Refuse(facade.ErrBadParameter, dryRunName, facade.ReasonRepeated)
	case v[0] == "1" || v[0] == "true":
		return true, nil
	case v[0] == "0" || v[0] == "false":
		return false, nil
	}
	return false, facade.Refuse(facade.ErrBadParameter, dryRunName, facade.ReasonNotFlag)
}

// dryRunName is the one query parameter a gradebook upload takes.
const dryRunName = "dry_run"
