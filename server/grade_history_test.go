package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
)

// TestGradeHistoryAuthorizationTable: the history follows the rule for
// reading the grade, for every kind of principal × own / other / enrolled
// without a grade / unknown student.
func TestGradeHistoryAuthorizationTable(t *testing.T) {
	e := newEnv(t)
	seedGrades(t, e)
	const F = http.StatusForbidden
	want := map[string]struct {
		token string
		by    map[string]int
	}{
		"student alice":        {token(t, "alice", "student"), map[string]int{"alice": 200, "dave": F, "ghost": F, "nobody": F}},
		"professor bob":        {token(t, "bob", "professor"), map[string]int{"alice": 200, "dave": F, "ghost": 404, "nobody": F}},
		"view-only erin":       {token(t, "erin", "professor"), map[string]int{"alice": 200, "dave": F, "ghost": 404, "nobody": F}},
		"team professor frank": {token(t, "frank", "professor"), map[string]int{"alice": F, "dave": 200, "ghost": F, "nobody": F}},
		"developer carol":      {token(t, "carol", "developer"), map[string]int{"alice": F, "dave": F, "ghost": F, "nobody": F}},
		"no-role alice":        {token(t, "alice", ""), map[string]int{"alice": F, "dave": F, "ghost": F, "nobody": F}},
		"student named bob":    {token(t, "bob", "student"), map[string]int{"alice": F, "dave": F, "ghost": F, "nobody": F}},
		"professor alice":      {token(t, "alice", "professor"), map[string]int{"alice": F, "dave": F, "ghost": F, "nobody": F}},
	}
	for _, name := range sortedKeys(want) {
		w := want[name]
		for _, student := range sortedKeys(w.by) {
			r := e.do(req{method: "GET", path: "/student/" + student + "/english/grade/history", token: w.token})
			if r.status != w.by[student] {
				t.Errorf("%s reads %s's history: %d, want %d (%s)", name, student, r.status, w.by[student], r.body)
			}
		}
		for _, bad := range []string{"a%2Fb", "al%20ice", "%E2%80%AEalice"} {
			if r := e.do(req{method: "GET", path: "/student/" + bad + "/english/grade/history", token: w.token}); r.status != 400 {
				t.Errorf("%s, student %q: %d, want 400", name, bad, r.status)
			}
		}
	}
	if r := e.do(req{method: "GET", path: "/student/alice/english/grade/history"}); r.status != 401 {
		t.Errorf("no token: %d, want 401", r.status)
	}
	if r := e.do(req{method: "PUT", path: "/student/alice/english/grade/history", token: token(t, "bob", "professor"), body: `{}`}); r.status != 405 {
		t.Errorf("PUT on the history: %d, want 405", r.status)
	}
}

// TestGradeHistoryRefusalsIdentical: refusing the history of a student with
// a trail, one enrolled without a grade, and one who does not exist are the
// same bytes.
func TestGradeHistoryRefusalsIdentical(t *testing.T) {
	e := newEnv(t)
	seedGrades(t, e)
	cases := []struct {
		tok      string
		students []string // refused: one with a trail, one enrolled without a grade, one unknown
	}{
		{token(t, "alice", "student"), []string{"dave", "ghost", "nobody"}},
		{token(t, "carol", "developer"), []string{"alice", "ghost", "nobody"}},
		{token(t, "frank", "professor"), []string{"alice", "ghost", "nobody"}},
	}
	for _, c := range cases {
		tok := c.tok
		var first resp
		for i, student := range c.students {
			r := e.do(req{method: "GET", path: "/student/" + student + "/english/grade/history", token: tok,
				header: map[string]string{"X-Request-ID": "same-id"}})
			if r.status != http.StatusForbidden {
				t.Fatalf("%s: %d", student, r.status)
			}
			if i == 0 {
				first = r
				continue
			}
			if r.body != first.body || fmt.Sprint(stableHeaders(r.header)) != fmt.Sprint(stableHeaders(first.header)) {
				t.Errorf("refusal for %s differs:\n%s\n%s", student, r.body, first.body)
			}
		}
	}
}

// TestGradeHistoryShowsEveryChange: who changed the grade, when, from what
// to what, newest first; ?limit pages it.
func TestGradeHistoryShowsEveryChange(t *testing.T) {
	e := newEnv(t)
	bob := token(t, "bob", "professor")
	path := "/student/ghost/english/grade"
	e.do(req{method: "POST", path: path, token: bob, body: `{"grade":"C"}`})
	e.do(req{method: "PUT", path: path, token: bob, body: `{"grade":"B"}`})
	e.do(req{method: "PUT", path: path, token: bob, body: `{"grade":"A-"}`, header: map[string]string{"If-Match": `"2"`}})

	r := e.do(req{method: "GET", path: path + "/history", token: token(t, "erin", "professor")})
	if r.status != 200 || r.header.Get("Content-Type") != "application/json" {
		t.Fatalf("history: %d %s", r.status, r.body)
	}
	var h struct {
		StudentID string `json:"student_id"`
		Subject   string `json:"subject"`
		Versions  []struct {
			Version       int     `json:"version"`
			Grade         string  `json:"grade"`
			PreviousGrade *string `json:"previous_grade"`
			UpdatedBy     string  `json:"updated_by"`
			UpdatedAt     string  `json:"updated_at"`
		} `json:"versions"`
	}
	if err := json.Unmarshal([]byte(r.body), &h); err != nil {
		t.Fatal(err)
	}
	if h.StudentID != "ghost" || h.Subject != "english" || len(h.Versions) != 3 {
		t.Fatalf("history: %s", r.body)
	}
	wantGrades := []struct {
		v         int
		grade, at string
		prev      string
	}{{3, "A-", "", "B"}, {2, "B", "", "C"}, {1, "C", "", ""}}
	for i, w := range wantGrades {
		v := h.Versions[i]
		prev := ""
		if v.PreviousGrade != nil {
			prev = *v.PreviousGrade
		}
		if v.Version != w.v || v.Grade != w.grade || prev != w.prev || v.UpdatedBy != "bob" || v.UpdatedAt == "" {
			t.Errorf("version %d: %+v (prev %q)", i, v, prev)
		}
	}
	if h.Versions[2].PreviousGrade != nil {
		t.Errorf("first version has a previous grade")
	}
	r = e.do(req{method: "GET", path: path + "/history?limit=1", token: bob})
	if r.status != 200 || json.Unmarshal([]byte(r.body), &h) != nil || len(h.Versions) != 1 || h.Versions[0].Version != 3 {
		t.Fatalf("limit=1: %d %s", r.status, r.body)
	}
	for _, bad := range []string{"0", "101", "-1", "01", "x", "1.5"} {
		if r := e.do(req{method: "GET", path: path + "/history?limit=" + bad, token: bob}); r.status != 400 {
			t.Errorf("limit=%s: %d, want 400", bad, r.status)
		}
	}
}
