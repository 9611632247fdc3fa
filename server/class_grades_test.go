package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

type classGrades struct {
	ClassID  string `json:"class_id"`
	Subject  string `json:"subject"`
	Size     int    `json:"size"`
	Start    int    `json:"start"`
	Limit    int    `json:"limit"`
	Students []struct {
		StudentID string  `json:"student_id"`
		Grade     *string `json:"grade"`
		Version   int     `json:"version"`
		UpdatedBy string  `json:"updated_by"`
	} `json:"students"`
	Next string `json:"next"`
}

// TestClassGradesAuthorizationTable: only a professor with view on the class
// (directly or through a group) lists it; every other principal kind, and
// a class nobody teaches, is refused alike.
func TestClassGradesAuthorizationTable(t *testing.T) {
	e := newEnv(t)
	seedGrades(t, e)
	const F = http.StatusForbidden
	want := map[string]struct {
		token string
		by    map[string]int
	}{
		"professor bob":        {token(t, "bob", "professor"), map[string]int{"english-101": 200, "history-201": F, "no-such-class": F}},
		"view-only erin":       {token(t, "erin", "professor"), map[string]int{"english-101": 200, "history-201": F, "no-such-class": F}},
		"team professor frank": {token(t, "frank", "professor"), map[string]int{"english-101": F, "history-201": 200, "no-such-class": F}},
		"student alice":        {token(t, "alice", "student"), map[string]int{"english-101": F, "history-201": F, "no-such-class": F}},
		"developer carol":      {token(t, "carol", "developer"), map[string]int{"english-101": F, "history-201": F, "no-such-class": F}},
		"no-role bob":          {token(t, "bob", ""), map[string]int{"english-101": F, "history-201": F, "no-such-class": F}},
		"student named bob":    {token(t, "bob", "student"), map[string]int{"english-101": F, "history-201": F, "no-such-class": F}},
		"professor as a group": {token(t, "team:history", "professor"), map[string]int{"english-101": F, "history-201": F, "no-such-class": F}},
	}
	for _, name := range sortedKeys(want) {
		w := want[name]
		for _, class := range sortedKeys(w.by) {
			r := e.do(req{method: "GET", path: "/class/" + class + "/grades", token: w.token})
			if r.status != w.by[class] {
				t.Errorf("%s lists %s: %d, want %d (%s)", name, class, r.status, w.by[class], r.body)
			}
		}
		for _, bad := range []string{"a%2Fb", "..%2F", "x%20y", "english-101%3F"} {
			if r := e.do(req{method: "GET", path: "/class/" + bad + "/grades", token: w.token}); r.status != 400 {
				t.Errorf("%s, class %q: %d, want 400", name, bad, r.status)
			}
		}
	}
	if r := e.do(req{method: "GET", path: "/class/english-101/grades"}); r.status != 401 {
		t.Errorf("no token: %d", r.status)
	}
	if r := e.do(req{method: "PUT", path: "/class/english-101/grades", token: token(t, "bob", "professor"), body: `{}`}); r.status != 405 {
		t.Errorf("PUT: %d, want 405", r.status)
	}
}

// TestClassGradesRefusalsIdentical: refusing a class that exists and one
// that does not are the same bytes.
func TestClassGradesRefusalsIdentical(t *testing.T) {
	e := newEnv(t)
	for _, tok := range []string{token(t, "frank", "professor"), token(t, "alice", "student"), token(t, "carol", "developer")} {
		var first resp
		for i, class := range []string{"english-101", "no-such-class"} {
			r := e.do(req{method: "GET", path: "/class/" + class + "/grades", token: tok,
				header: map[string]string{"X-Request-ID": "same-id"}})
			if r.status != http.StatusForbidden {
				t.Fatalf("%s: %d", class, r.status)
			}
			if i == 0 {
				first = r
				continue
			}
			if r.body != first.body || fmt.Sprint(stableHeaders(r.header)) != fmt.Sprint(stableHeaders(first.header)) {
				t.Errorf("refusals differ:\n%s\n%s", r.body, first.body)
			}
		}
	}
}

// TestClassGradesListsEnrolledStudents: every enrolled student with their
// grade and version (null for none), sorted, paged by following next.
func TestClassGradesListsEnrolledStudents(t *testing.T) {
	e := newEnv(t)
	seedGrades(t, e)
	bob := token(t, "bob", "professor")
	var page classGrades
	r := e.do(req{method: "GET", path: "/class/english-101/grades", token: bob})
	if r.status != 200 || json.Unmarshal([]byte(r.body), &page) != nil {
		t.Fatalf("list: %d %s", r.status, r.body)
	}
	if page.ClassID != "english-101" || page.Subject != "english" || page.Size != 2 || len(page.Students) != 2 || page.Next != "" {
		t.Fatalf("list: %s", r.body)
	}
	alice, ghost := page.Students[0], page.Students[1]
	if alice.StudentID != "alice" || alice.Grade == nil || *alice.Grade != "B" || alice.Version != 1 ||
		ghost.StudentID != "ghost" || ghost.Grade != nil || ghost.Version != 0 {
		t.Fatalf("students: %s", r.body)
	}
	// A change shows up at once, with its new version.
	e.do(req{method: "PUT", path: "/student/alice/english/grade", token: bob, body: `{"grade":"A"}`})
	var seen []string
	next := "/class/english-101/grades?limit=1"
	for next != "" {
		r := e.do(req{method: "GET", path: next, token: bob})
		var p classGrades
		if r.status != 200 || json.Unmarshal([]byte(r.body), &p) != nil || len(p.Students) != 1 || p.Limit != 1 || p.Size != 2 {
			t.Fatalf("page %s: %d %s", next, r.status, r.body)
		}
		s := p.Students[0]
		if s.StudentID == "alice" && (*s.Grade != "A" || s.Version != 2 || s.UpdatedBy != "bob") {
			t.Errorf("alice after the change: %s", r.body)
		}
		seen = append(seen, s.StudentID)
		next = p.Next
	}
	if fmt.Sprint(seen) != "[alice ghost]" {
		t.Errorf("pages: %v", seen)
	}
	for _, start := range []string{"5", "9223372036854775807"} {
		var past classGrades
		r = e.do(req{method: "GET", path: "/class/english-101/grades?start=" + start, token: bob})
		if r.status != 200 || json.Unmarshal([]byte(r.body), &past) != nil || len(past.Students) != 0 || past.Size != 2 || past.Next != "" {
			t.Errorf("start=%s, past the end: %d %s", start, r.status, r.body)
		}
	}
	for _, q := range []string{"limit=0", "limit=101", "limit=01", "start=-1", "start=x", "start=1.0"} {
		if r := e.do(req{method: "GET", path: "/class/english-101/grades?" + q, token: bob}); r.status != 400 {
			t.Errorf("%s: %d, want 400", q, r.status)
		}
	}
}

// TestClassListShowsTheCallersClasses: GET /class names exactly the
// classes the caller may list, with the path to follow.
func TestClassListShowsTheCallersClasses(t *testing.T) {
	e := newEnv(t)
	cases := map[string]string{
		"bob/professor":    `{"classes":[{"class_id":"english-101","grades":"/class/english-101/grades"}]}`,
		"frank/professor":  `{"classes":[{"class_id":"history-201","grades":"/class/history-201/grades"}]}`,
		"alice/student":    `{"classes":[]}`,
		"carol/developer":  `{"classes":[]}`,
		"nobody/professor": `{"classes":[]}`,
	}
	for who, want := range cases {
		sub, role, _ := strings.Cut(who, "/")
		r := e.do(req{method: "GET", path: "/class", token: token(t, sub, role)})
		if r.status != 200 || r.body != want+"\n" {
			t.Errorf("%s: %d %q, want %s", who, r.status, r.body, want)
		}
	}
}
