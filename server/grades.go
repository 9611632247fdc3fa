package server

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/grades"
)

// gradeHandlers answer the grade routes (docs/contract.md §4): a
// student's grade and its history, a class's grades and gradebook. They
// reach the grade store and authz, nothing else.
type gradeHandlers struct {
	gate
	grades *grades.Store
}

type gradeBody struct {
	Grade *string `json:"grade"`
}

// authorizeGrade asks authz about the student; write says whether the
// operation changes the grade.
func (h *gradeHandlers) authorizeGrade(c echo.Context, student facade.StudentID, write bool) error {
	q := question{op: "grade.view", allow: func(p facade.Principal) bool { return h.az.CanViewGrade(p, student) }}
	if write {
		q = question{op: "grade.write", allow: func(p facade.Principal) bool { return h.az.CanWriteGrade(p, student) }}
	}
	q.target = func() string { return "student:" + student.String() }
	return h.authorize(c, q)
}

func (h *gradeHandlers) getGrade(c echo.Context) error {
	student, err := pathID(c, studentParam, facade.ParseStudentID)
	if err != nil {
		return err
	}
	if err := h.authorizeGrade(c, student, false); err != nil {
		return err
	}
	rec, err := h.grades.Get(c.Request().Context(), student, grades.SubjectEnglish)
	if err != nil {
		return err
	}
	return writeGrade(c, http.StatusOK, rec)
}

func (h *gradeHandlers) createGrade(c echo.Context) error {
	student, grade, err := h.gradeWrite(c)
	if err != nil {
		return err
	}
	rec, err := h.grades.Create(c.Request().Context(), student, grades.SubjectEnglish, grade, principal(c).ID)
	if err != nil {
		return err
	}
	c.Response().Header().Set("Location", c.Request().URL.EscapedPath())
	return writeGrade(c, http.StatusCreated, rec)
}

func (h *gradeHandlers) updateGrade(c echo.Context) error {
	ifMatch, err := grades.ParseIfMatch(c.Request().Header.Get("If-Match"))
	if err != nil {
		return err
	}
	student, grade, err := h.gradeWrite(c)
	if err != nil {
		return err
	}
	rec, err := h.grades.Update(c.Request().Context(), student, grades.SubjectEnglish, grade, principal(c).ID, ifMatch)
	if err != nil {
		return err
	}
	return writeGrade(c, http.StatusOK, rec)
}

// gradeWrite runs the checks shared by POST and PUT in the order of docs/contract.md §2: the
// path and body (400/413/415) are input validation, then authorization.
func (h *gradeHandlers) gradeWrite(c echo.Context) (student facade.StudentID, grade grades.Grade, err error) {
	if student, err = pathID(c, studentParam, facade.ParseStudentID); err != nil {
		return student, grade, err
	}
	var body gradeBody
	if err := decodeJSON(c.Request(), &body); err != nil {
		return student, grade, err
	}
	if body.Grade == nil {
		return student, grade, grades.NotOnScale
	}
	if grade, err = grades.ParseGrade(*body.Grade); err != nil {
		return student, grade, err
	}
	return student, grade, h.authorizeGrade(c, student, true)
}

func writeGrade(c echo.Context, status int, rec grades.Record) error {
	c.Response().Header().Set("ETag", grades.ETag(rec.Version))
	return c.JSON(status, rec)
}

// defaultHistoryLimit is how many versions a history page holds when the
// caller does not say.
const defaultHistoryLimit = 20

// historyVersion is one change to a grade, shaped like the grade record
// it produced plus the grade it replaced (null for the first version).
type historyVersion struct {
	Version       int64     `json:"version"`
	Grade         string    `json:"grade"`
	PreviousGrade *string   `json:"previous_grade"`
	UpdatedBy     string    `json:"updated_by"`
	UpdatedAt     time.Time `json:"updated_at"`
}

type historyView struct {
	StudentID string           `json:"student_id"`
	Subject   string           `json:"subject"`
	Versions  []historyVersion `json:"versions"`
}

// getGradeHistory answers the grade's audit trail, newest first, under the
// rule for reading the grade. A grade that never existed is 404, as GET
// on the grade is.
func (h *gradeHandlers) getGradeHistory(c echo.Context) error {
	limit, err := pageLimit(c.QueryParam("limit"), defaultHistoryLimit, maxPageLimit)
	if err != nil {
		return err
	}
	student, err := pathID(c, studentParam, facade.ParseStudentID)
	if err != nil {
		return err
	}
	if err := h.authorizeGrade(c, student, false); err != nil {
		return err
	}
	trail, err := h.grades.Audit(c.Request().Context(), student, grades.SubjectEnglish, limit)
	if err != nil {
		return err
	}
	if len(trail) == 0 {
		return facade.ErrNotFound
	}
	view := historyView{StudentID: student.String(), Subject: grades.SubjectEnglish, Versions: make([]historyVersion, len(trail))}
	for i, a := range trail {
		v := historyVersion{Version: a.Version, Grade: a.New, UpdatedBy: a.By, UpdatedAt: a.At}
		if a.Old != "" {
			v.PreviousGrade = &a.Old
		}
		view.Versions[i] = v
	}
	return c.JSON(http.StatusOK, view)
}
