package server_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/facade-dev/facade/grades"
)

// seedGrades stores alice's and dave's grades; ghost is enrolled with none.
func seedGrades(t testing.TB, e *env) {
	t.Helper()
	st := grades.NewStore(e.rdb, grades.Config{Log: quietLog})
	for _, s := range []string{"alice", "dave"} {
		if _, err := st.Seed(context.Background(), studentID(s), grades.SubjectEnglish, parsedGrade("B")); err != nil {
			t.Fatal(err)
		}
	}
}

// TestGradeAuthorizationTable walks docs/contract.md §3's grade table: every kind
// of principal × own / other / absent / malformed student × GET/POST/PUT.
func TestGradeAuthorizationTable(t *testing.T) {
	principals := map[string]string{
		"student alice":        token(t, "alice", "student"),
		"professor bob":        token(t, "bob", "professor"),
		"view-only erin":       token(t, "erin", "professor"),
		"team professor frank": token(t, "frank", "professor"),
		"developer carol":      token(t, "carol", "developer"),
		"no-role alice":        token(t, "alice", ""),
		"student named bob":    token(t, "bob", "student"),
		"professor alice":      token(t, "alice", "professor"),
	}
	// want[principal][student] = GET, POST, PUT statuses. POST on an
	// existing grade is 409, on ghost 201; PUT on ghost 404.
	type triple [3]int
	const F = http.StatusForbidden
	want := map[string]map[string]triple{
		"student alice":        {"alice": {200, F, F}, "dave": {F, F, F}, "ghost": {F, F, F}, "nobody": {F, F, F}},
		"professor bob":        {"alice": {200, 409, 200}, "dave": {F, F, F}, "ghost": {404, 201, 200}, "nobody": {F, F, F}},
		"view-only erin":       {"alice": {200, F, F}, "dave": {F, F, F}, "ghost": {404, F, F}, "nobody": {F, F, F}},
		"team professor frank": {"alice": {F, F, F}, "dave": {200, 409, 200}, "ghost": {F, F, F}, "nobody": {F, F, F}},
		"developer carol":      {"alice": {F, F, F}, "dave": {F, F, F}, "ghost": {F, F, F}, "nobody": {F, F, F}},
		"no-role alice":        {"alice": {F, F, F}, "dave": {F, F, F}, "ghost": {F, F, F}, "nobody": {F, F, F}},
		"student named bob":    {"alice": {F, F, F}, "dave": {F, F, F}, "ghost": {F, F, F}, "nobody": {F, F, F}},
		"professor alice":      {"alice": {F, F, F}, "dave": {F, F, F}, "ghost": {F, F, F}, "nobody": {F, F, F}},
	}
	for _, name := range sortedKeys(want) {
		// A fresh store per principal: each row starts from the same data.
		e := newEnv(t)
		seedGrades(t, e)
		tok := principals[name]
		for _, student := range []string{"alice", "dave", "ghost", "nobody"} {
			w := want[name][student]
			for i, method := range []string{http.MethodGet, http.MethodPost, http.MethodPut} {
				path := "/student/" + student + "/english/grade"
				body := ""
				if method != http.MethodGet {
					body = `{"grade":"A-"}`
				}
				r := e.do(req{method: method, path: path, token: tok, body: body})
				if r.status != w[i] {
					t.Errorf("%s %s %s: status %d, want %d (%s)", name, method, student, r.status, w[i], r.body)
				}
			}
		}
		// Malformed identifiers are 400 for everyone, before authorization.
		for _, bad := range []string{"a%2Fb", "..%2F..%2Fetc", "al%20ice", strings.Repeat("x", 65), "%E2%80%AEalice", "alice%00"} {
			for _, method := range []string{http.MethodGet, http.MethodPut} {
				r := e.do(req{method: method, path: "/student/" + bad + "/english/grade", token: tok, body: `{"grade":"A"}`})
				if r.status != http.StatusBadRequest {
					t.Errorf("%s %s %q: status %d, want 400", name, method, bad, r.status)
				}
			}
		}
	}
}

// TestRefusalsAreIdentical: a refusal for a student who exists and one who
// does not are byte-for-byte the same (same request id sent by the caller).
func TestRefusalsAreIdentical(t *testing.T) {
	e := newEnv(t)
	seedGrades(t, e)
	tok := token(t, "alice", "student")
	for _, method := range []string{http.MethodGet, http.MethodPut, http.MethodPost} {
		var first resp
		for i, student := range []string{"dave", "nobody", "ghost"} {
			r := e.do(req{method: method, path: "/student/" + student + "/english/grade", token: tok,
				body: `{"grade":"A"}`, header: map[string]string{"X-Request-ID": "same-id"}})
			if r.status != http.StatusForbidden {
				t.Fatalf("%s %s: %d", method, student, r.status)
			}
			if i == 0 {
				first = r
				continue
			}
			if r.body != first.body || fmt.Sprint(stableHeaders(r.header)) != fmt.Sprint(stableHeaders(first.header)) {
				t.Errorf("%s: refusal for %s differs from dave's:\n%s\n%s", method, student, r.body, first.body)
			}
		}
	}
}

func TestGradeLifecycle(t *testing.T) {
	e := newEnv(t)
	bob := token(t, "bob", "professor")
	path := "/student/ghost/english/grade"
	r := e.do(req{method: "POST", path: path, token: bob, body: `{"grade":"B+"}`})
	if r.status != 201 || r.header.Get("Location") != path || r.header.Get("ETag") != `"1"` {
		t.Fatalf("create: %d %v %s", r.status, r.header, r.body)
	}
	rec := r.problem(t) // plain JSON object
	if rec["student_id"] != "ghost" || rec["subject"] != "english" || rec["grade"] != "B+" ||
		rec["updated_by"] != "bob" || rec["version"] != float64(1) || rec["updated_at"] == "" {
		t.Fatalf("created record: %s", r.body)
	}
	if r := e.do(req{method: "POST", path: path, token: bob, body: `{"grade":"A"}`}); r.status != 409 {
		t.Fatalf("second create: %d", r.status)
	}
	r = e.do(req{method: "PUT", path: path, token: bob, body: `{"grade":"A"}`, header: map[string]string{"If-Match": `"1"`}})
	if r.status != 200 || r.header.Get("ETag") != `"2"` || !strings.Contains(r.body, `"grade":"A"`) {
		t.Fatalf("update: %d %s", r.status, r.body)
	}
	r = e.do(req{method: "PUT", path: path, token: bob, body: `{"grade":"C"}`, header: map[string]string{"If-Match": `"1"`}})
	if r.status != 412 {
		t.Fatalf("stale If-Match: %d", r.status)
	}
	r = e.do(req{method: "GET", path: path, token: bob})
	if r.status != 200 || r.header.Get("ETag") != `"2"` || !strings.Contains(r.body, `"grade":"A"`) {
		t.Fatalf("get after stale update: %d %s", r.status, r.body)
	}
	audit, err := grades.NewStore(e.rdb, grades.Config{}).Audit(context.Background(), studentID("ghost"), grades.SubjectEnglish, 10)
	if err != nil || len(audit) != 2 || audit[0].Old != "B+" || audit[0].New != "A" || audit[0].By != "bob" {
		t.Fatalf("audit trail: %+v %v", audit, err)
	}
	if !strings.Contains(e.logs.String(), `"audit":true`) {
		t.Fatal("no audit log line for the grade change")
	}
	if r := e.do(req{method: "PUT", path: "/student/nobody-here/english/grade", token: token(t, "x", "professor"), body: `{"grade":"A"}`}); r.status != 403 {
		t.Fatalf("put by stranger: %d", r.status)
	}
}

func TestGradeBodyValidation(t *testing.T) {
	e := newEnv(t)
	bob := token(t, "bob", "professor")
	path := "/student/ghost/english/grade"
	cases := []struct {
		name, body, ctype string
		want              int
	}{
		{"unknown grade", `{"grade":"E"}`, "", 400},
		{"lower case", `{"grade":"a"}`, "", 400},
		{"unknown field", `{"grade":"A","student_id":"dave"}`, "", 400},
		{"missing grade", `{}`, "", 400},
		{"null grade", `{"grade":null}`, "", 400},
		{"number grade", `{"grade":4}`, "", 400},
		{"trailing data", `{"grade":"A"} {"grade":"B"}`, "", 400},
		{"not json", `grade=A`, "", 400},
		{"truncated", `{"grade":"A"`, "", 400},
		{"array", `[{"grade":"A"}]`, "", 400},
		{"xml content type", `<grade>A</grade>`, "application/xml", 415},
		{"form content type", `grade=A`, "application/x-www-form-urlencoded", 415},
		{"no content type", `{"grade":"A"}`, "-", 415},
		{"20 KB body", `{"grade":"` + strings.Repeat("A", 20<<10) + `"}`, "", 413},
		{"json with charset", `{"grade":"A"}`, "application/json; charset=utf-8", 201},
	}
	for _, c := range cases {
		h := map[string]string{}
		switch c.ctype {
		case "":
		case "-":
			h["Content-Type"] = ""
		default:
			h["Content-Type"] = c.ctype
		}
		r := e.do(req{method: "POST", path: path, token: bob, body: c.body, header: h})
		if r.status != c.want {
			t.Errorf("%s: status %d, want %d (%s)", c.name, r.status, c.want, r.body)
		}
	}
}
