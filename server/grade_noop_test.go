package server_test

import (
	"strings"
	"testing"
)

// TestPutOfTheStoredGradeChangesNothing: PUT of the grade already stored
// answers 200 with the current record: same version, same author and time,
// no history entry. A stale If-Match is still 412.
func TestPutOfTheStoredGradeChangesNothing(t *testing.T) {
	e := newEnv(t)
	seedGrades(t, e)
	bob, erin := token(t, "bob", "professor"), token(t, "erin", "professor")
	before := e.do(req{method: "GET", path: "/student/alice/english/grade", token: bob})
	r := e.do(req{method: "PUT", path: "/student/alice/english/grade", token: bob, body: `{"grade":"B"}`,
		header: map[string]string{"If-Match": `"1"`}})
	if r.status != 200 || r.body != before.body || r.header.Get("ETag") != `"1"` {
		t.Fatalf("PUT of the stored grade: %d %s ETag %s, want the record as before: %s", r.status, r.body, r.header.Get("ETag"), before.body)
	}
	h := e.do(req{method: "GET", path: "/student/alice/english/grade/history", token: bob})
	if strings.Count(h.body, `"version"`) != 1 {
		t.Errorf("history after a no-op PUT: %s", h.body)
	}
	if r := e.do(req{method: "PUT", path: "/student/alice/english/grade", token: bob, body: `{"grade":"B"}`,
		header: map[string]string{"If-Match": `"7"`}}); r.status != 412 {
		t.Errorf("no-op PUT with a stale If-Match: %d, want 412", r.status)
	}
	// Authorization still comes first: a view-only professor is refused
	// even when the PUT would change nothing.
	if r := e.do(req{method: "PUT", path: "/student/alice/english/grade", token: erin, body: `{"grade":"B"}`}); r.status != 403 {
		t.Errorf("view-only erin's no-op PUT: %d, want 403", r.status)
	}
}
