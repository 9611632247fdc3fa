package server

import (
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/grades"
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
func (s *Server) listClasses(c echo.Context) error {
	view := classesView{Classes: []classLink{}}
	for _, id := range s.authz.ViewableClasses(principal(c)) {
		view.Classes = append(view.Classes, classLink{ClassID: id, Grades: classGradesPath(id)})
	}
	return c.JSON(http.StatusOK, view)
}

// getClassGrades answers the students enrolled in a class, sorted by id and
// paged, with their english grades, for a principal with view on the class.
func (s *Server) getClassGrades(c echo.Context) error {
	limit, err := pageLimit(c.QueryParam("limit"), defaultClassPage, maxPageLimit)
	if err != nil {
		return err
	}
	start, err := pageStart(c.QueryParam("start"))
	if err != nil {
		return err
	}
	class, err := pathID(c, "class_id", facade.ValidID)
	if err != nil {
		return err
	}
	if !s.authz.CanViewClass(principal(c), class) {
		return s.deny(c, "class.view", "class:"+class)
	}
	enrolled := s.authz.ClassStudents(principal(c), class)
	// Bounds from lengths only: start may be any int a client wrote.
	lo := min(start, len(enrolled))
	hi := lo + min(limit, len(enrolled)-lo)
	page := enrolled[lo:hi]
	recs, err := s.grades.GetMany(c.Request().Context(), page, grades.SubjectEnglish)
	if err != nil {
		return err
	}
	view := classGradesView{ClassID: class, Subject: grades.SubjectEnglish, Size: len(enrolled),
		Start: start, Limit: limit, Students: make([]studentGrade, len(page))}
	for i, id := range page {
		view.Students[i] = studentGrade{StudentID: id}
		if rec, ok := recs[id]; ok {
			view.Students[i] = studentGrade{StudentID: id, Grade: &rec.Grade, Version: rec.Version,
				UpdatedAt: &rec.UpdatedAt, UpdatedBy: rec.UpdatedBy}
		}
	}
	if hi < len(enrolled) {
		view.Next = classGradesPath(class) + "?" + url.Values{
			"start": {strconv.Itoa(hi)}, "limit": {strconv.Itoa(limit)},
		}.Encode()
	}
	return c.JSON(http.StatusOK, view)
}

func classGradesPath(class string) string { return "/class/" + url.PathEscape(class) + "/grades" }
