package server

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/grades"
	"github.com/facade-dev/facade/internal/tracing"
)

type gradeBody struct {
	Grade *string `json:"grade"`
}

// authorizeGrade asks authz about the student; write says whether the
// operation changes the grade. It runs before any data is read.
func (s *Server) authorizeGrade(c echo.Context, student facade.StudentID, write bool) error {
	p, op := principal(c), "grade.view"
	if write {
		op = "grade.write"
	}
	span := tracing.Authorize(c.Request().Context(), op)
	allowed := s.authz.CanViewGrade(p, student)
	if write {
		allowed = s.authz.CanWriteGrade(p, student)
	}
	tracing.Allowed(span, allowed)
	if !allowed {
		return s.deny(c, op, "student:"+student.String())
	}
	return nil
}

func (s *Server) getGrade(c echo.Context) error {
	student, err := pathID(c, studentParam, facade.ParseStudentID)
	if err != nil {
		return err
	}
	if err := s.authorizeGrade(c, student, false); err != nil {
		return err
	}
	rec, err := s.grades.Get(c.Request().Context(), student, grades.SubjectEnglish)
	if err != nil {
		return err
	}
	return writeGrade(c, http.StatusOK, rec)
}

func (s *Server) createGrade(c echo.Context) error {
	student, grade, err := s.gradeWrite(c)
	if err != nil {
		return err
	}
	rec, err := s.grades.Create(c.Request().Context(), student, grades.SubjectEnglish, grade, principal(c).ID)
	if err != nil {
		return err
	}
	c.Response().Header().Set("Location", c.Request().URL.EscapedPath())
	return writeGrade(c, http.StatusCreated, rec)
}

func (s *Server) updateGrade(c echo.Context) error {
	ifMatch, err := grades.ParseIfMatch(c.Request().Header.Get("If-Match"))
	if err != nil {
		return err
	}
	student, grade, err := s.gradeWrite(c)
	if err != nil {
		return err
	}
	rec, err := s.grades.Update(c.Request().Context(), student, grades.SubjectEnglish, grade, principal(c).ID, ifMatch)
	if err != nil {
		return err
	}
	return writeGrade(c, http.StatusOK, rec)
}

// gradeWrite runs the checks shared by POST and PUT in the order of docs/contract.md §2: the
// path and body (400/413/415) are input validation, then authorization.
func (s *Server) gradeWrite(c echo.Context) (student facade.StudentID, grade grades.Grade, err error) {
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
	return student, grade, s.authorizeGrade(c, student, true)
}

func writeGrade(c echo.Context, status int, rec grades.Record) error {
	c.Response().Header().Set("ETag", grades.ETag(rec.Version))
	return writeJSON(c, status, rec)
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
func (s *Server) getGradeHistory(c echo.Context) error {
	limit, err := pageLimit(c.QueryParam("limit"), defaultHistoryLimit, maxPageLimit)
	if err != nil {
		return err
	}
	student, err := pathID(c, studentParam, facade.ParseStudentID)
	if err != nil {
		return err
	}
	if err := s.authorizeGrade(c, student, false); err != nil {
		return err
	}
	trail, err := s.grades.Audit(c.Request().Context(), student, grades.SubjectEnglish, limit)
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
	return writeJSON(c, http.StatusOK, view)
}
