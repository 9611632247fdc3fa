package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/grades"
)

// A class's posting (docs/contract.md §4, "When students see a grade"):
// its policy, posting its grades, and the class at a glance. The rules
// live in package grades; these handlers parse, ask authz, and answer.

type postingView struct {
	ClassID  string        `json:"class_id"`
	Policy   grades.Policy `json:"policy"`
	Unposted int           `json:"unposted"`
	// CanPost says whether the caller may post and switch the policy, so
	// a page offers the controls to exactly those (post is its own grant:
	// a teaching assistant may update without it, a lecturer post without
	// update).
	CanPost bool `json:"can_post"`
}

type postingBody struct {
	Policy *string `json:"policy"`
}

type postBody struct {
	Students []string `json:"students"`
}

type summaryView struct {
	ClassID string `json:"class_id"`
	Subject string `json:"subject"`
	grades.Summary
}

// authorizePost asks authz whether the caller may post class's grades
// (and change its policy).
func (h *gradeHandlers) authorizePost(c echo.Context, class facade.ClassID) error {
	return h.authorize(c, question{op: "class.post",
		allow:  func(p facade.Principal) bool { return h.az.CanPostClass(p, class) },
		target: func() string { return "class:" + class.String() }})
}

// getPosting answers the class's policy and how many of its grades wait
// for a post (view on the class).
func (h *gradeHandlers) getPosting(c echo.Context) error {
	class, err := pathID(c, classParam, facade.ParseClassID)
	if err != nil {
		return err
	}
	if err := h.authorizeClass(c, "class.view", class); err != nil {
		return err
	}
	return h.writePosting(c, class)
}

func (h *gradeHandlers) writePosting(c echo.Context, class facade.ClassID) error {
	ctx := c.Request().Context()
	policy, err := h.grades.PolicyOf(ctx, class)
	if err != nil {
		return err
	}
	unposted, err := h.grades.Unposted(ctx, h.az.Enrollment().Students(class), grades.SubjectEnglish)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, postingView{ClassID: class.String(), Policy: policy, Unposted: unposted,
		CanPost: h.az.CanPostClass(principal(c), class)})
}

// setPosting changes the class's policy (post on the class); turning it
// automatic posts every grade that waits. It answers as getPosting.
func (h *gradeHandlers) setPosting(c echo.Context) error {
	class, err := pathID(c, classParam, facade.ParseClassID)
	if err != nil {
		return err
	}
	var body postingBody
	if err := decodeJSON(c.Request(), &body); err != nil {
		return err
	}
	if body.Policy == nil {
		return facade.Refuse(facade.ErrBadParameter, "policy", facade.ReasonMalformed)
	}
	policy, err := grades.ParsePolicy(*body.Policy)
	if err != nil {
		return err
	}
	if err := h.authorizePost(c, class); err != nil {
		return err
	}
	_, err = h.grades.SetPolicy(c.Request().Context(), class, policy, h.az.Enrollment().Students(class), grades.SubjectEnglish, principal(c).ID)
	if err != nil {
		return err
	}
	return h.writePosting(c, class)
}

// postGrades posts the class's grades that wait (post on the class): all
// of them, or those of the students the body names, each of whom must be
// enrolled in the class (else 422 not-in-class, nothing posted).
func (h *gradeHandlers) postGrades(c echo.Context) error {
	class, err := pathID(c, classParam, facade.ParseClassID)
	if err != nil {
		return err
	}
	named, err := postedStudents(c.Request())
	if err != nil {
		return err
	}
	if err := h.authorizePost(c, class); err != nil {
		return err
	}
	students := h.az.Enrollment().Students(class)
	if named != nil {
		enrolled := make(map[facade.StudentID]bool, len(students))
		for _, id := range students {
			enrolled[id] = true
		}
		for _, id := range named {
			if !enrolled[id] {
				return facade.ErrNotInClass
			}
		}
		students = named
	}
	res, err := h.grades.Post(c.Request().Context(), students, grades.SubjectEnglish, principal(c).ID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, res)
}

// postedStudents reads a post's body: none (or {}) posts the whole class
// (nil); {"students": [...]} the students named, each once. An empty
// list is refused: it would post nobody, which no one sends on purpose.
func postedStudents(r *http.Request) ([]facade.StudentID, error) {
	if r.ContentLength == 0 && r.Header.Get(echo.HeaderContentType) == "" {
		return nil, nil
	}
	var body postBody
	if err := decodeJSON(r, &body); err != nil {
		return nil, err
	}
	if body.Students == nil {
		return nil, nil
	}
	if len(body.Students) == 0 {
		return nil, facade.Refuse(facade.ErrBadParameter, "students", facade.ReasonOutOfRange)
	}
	seen := make(map[facade.StudentID]bool, len(body.Students))
	out := make([]facade.StudentID, 0, len(body.Students))
	for _, s := range body.Students {
		id, err := facade.ParseStudentID(s)
		if err != nil {
			return nil, facade.Refuse(facade.ErrBadIdentifier, "students", facade.ReasonMalformed)
		}
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out, nil
}

// getSummary answers the class at a glance (view on the class; a student
// never: class grants need the professor role). Counted over the students
// the caller may view, as the class's list is.
func (h *gradeHandlers) getSummary(c echo.Context) error {
	class, err := pathID(c, classParam, facade.ParseClassID)
	if err != nil {
		return err
	}
	if err := h.authorizeClass(c, "class.view", class); err != nil {
		return err
	}
	enrolled := h.az.Enrollment().Visible(principal(c), class)
	recs, err := h.recordsAsSeen(c, enrolled)
	if err != nil {
		return err
	}
	list := make([]grades.Record, 0, len(recs))
	for _, id := range enrolled {
		if rec, ok := recs[id]; ok {
			list = append(list, rec)
		}
	}
	return c.JSON(http.StatusOK, summaryView{ClassID: class.String(), Subject: grades.SubjectEnglish,
		Summary: grades.Summarize(list, len(enrolled))})
}
