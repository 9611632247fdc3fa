package server

import (
	"net/http"

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
	var rec grades.Record
	if readsAsStudent(c, student) {
		rec, err = h.grades.GetPosted(c.Request().Context(), student, grades.SubjectEnglish, h.az.Enrollment().Classes(student))
	} else {
		rec, err = h.grades.Get(c.Request().Context(), student, grades.SubjectEnglish)
	}
	if err != nil {
		return err
	}
	return writeGrade(c, http.StatusOK, rec)
}

// readsAsStudent says whether the caller reads student's grade as its
// student: as it was last posted (docs/contract.md §4). Whoever reads their
// own grade does, whatever else they are (a teaching assistant enrolled
// in a class they help teach included); staff read the current one.
// Once a class of the student's is manual, their "no grade" and "not
// posted yet" are one answer (ErrGradeNotPosted), so entering a grade
// that waits changes nothing the student can see.
func readsAsStudent(c echo.Context, student facade.StudentID) bool {
	return principal(c).ID == student.String()
}

func (h *gradeHandlers) createGrade(c echo.Context) error {
	student, grade, err := h.gradeWrite(c)
	if err != nil {
		return err
	}
	rec, err := h.grades.Create(c.Request().Context(), student, grades.SubjectEnglish, grade, principal(c).ID, h.az.Enrollment().Classes(student))
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
	rec, err := h.grades.Update(c.Request().Context(), student, grades.SubjectEnglish, grade, principal(c).ID, ifMatch, h.az.Enrollment().Classes(student))
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
	c.Response().Header().Set("ETag", grades.StaffETag(rec))
	return c.JSON(status, rec)
}

// defaultHistoryLimit is how many versions a history page holds when the
// caller does not say.
const defaultHistoryLimit = 20

type historyView struct {
	StudentID string           `json:"student_id"`
	Subject   string           `json:"subject"`
	Versions  []grades.Version `json:"versions"`
}

// getGradeHistory answers the grade's versions, newest first, under the
// rule for reading the grade: a student's only those posted
// (grades.Store.History). A grade that never existed is 404, as GET on
// the grade is.
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
	versions, err := h.grades.History(c.Request().Context(), student, grades.SubjectEnglish, limit, readsAsStudent(c, student), h.az.Enrollment().Classes(student))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, historyView{StudentID: student.String(), Subject: grades.SubjectEnglish, Versions: versions})
}
