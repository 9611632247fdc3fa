package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/grades"
)

type gradeBody struct {
	Grade *string `json:"grade"`
}

// gradeTarget validates the student id and asks authz; write says whether
// the operation changes the grade. Both happen before any data is read.
func (s *Server) gradeTarget(c echo.Context, write bool) (facade.Principal, string, error) {
	student, err := pathID(c, "student_id", facade.ValidID)
	if err != nil {
		return facade.Principal{}, "", err
	}
	p := principal(c)
	allowed := s.authz.CanViewGrade(p, student)
	op := "grade.view"
	if write {
		allowed, op = s.authz.CanWriteGrade(p, student), "grade.write"
	}
	if !allowed {
		return p, "", s.deny(c, op, "student:"+student)
	}
	return p, student, nil
}

func (s *Server) getGrade(c echo.Context) error {
	_, student, err := s.gradeTarget(c, false)
	if err != nil {
		return err
	}
	rec, err := s.grades.Get(c.Request().Context(), student, grades.SubjectEnglish)
	if err != nil {
		return err
	}
	return writeGrade(c, http.StatusOK, rec)
}

func (s *Server) createGrade(c echo.Context) error {
	p, student, grade, err := s.gradeWrite(c)
	if err != nil {
		return err
	}
	rec, err := s.grades.Create(c.Request().Context(), student, grades.SubjectEnglish, grade, p.ID)
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
	p, student, grade, err := s.gradeWrite(c)
	if err != nil {
		return err
	}
	rec, err := s.grades.Update(c.Request().Context(), student, grades.SubjectEnglish, grade, p.ID, ifMatch)
	if err != nil {
		return err
	}
	return writeGrade(c, http.StatusOK, rec)
}

// gradeWrite runs the checks shared by POST and PUT in SPEC order: body
// (400/413/415) is input validation, then authorization.
func (s *Server) gradeWrite(c echo.Context) (facade.Principal, string, string, error) {
	if _, err := pathID(c, "student_id", facade.ValidID); err != nil {
		return facade.Principal{}, "", "", err
	}
	var body gradeBody
	if err := decodeJSON(c, &body); err != nil {
		return facade.Principal{}, "", "", err
	}
	if body.Grade == nil {
		return facade.Principal{}, "", "", facade.Errorf(facade.EINVALID, facade.DetailBadGrade)
	}
	grade, err := grades.ParseGrade(*body.Grade)
	if err != nil {
		return facade.Principal{}, "", "", err
	}
	p, student, err := s.gradeTarget(c, true)
	return p, student, grade, err
}

func writeGrade(c echo.Context, status int, rec grades.Record) error {
	c.Response().Header().Set("ETag", grades.ETag(rec.Version))
	return c.JSON(status, rec)
}

func principal(c echo.Context) facade.Principal {
	return facade.PrincipalFrom(c.Request().Context())
}

// deny audit-logs a refusal and returns the one 403 every refusal shares.
func (s *Server) deny(c echo.Context, op, target string) error {
	return s.authz.Refuse(c.Request().Context(), principal(c), op, target)
}
