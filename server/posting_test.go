package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// postingLines add lena, the lecturer who releases english-101's grades
// and holds nothing but post (teaching assistants enter them), and tara,
// who views and posts but changes no grade.
var postingLines = []string{
	"p, lena, class:english-101, post",
	"p, tara, class:english-101, view",
	"p, tara, class:english-101, post",
}

// studentSees is everything a student can ask about their own grade, as
// the bytes and headers they get: GET, HEAD, a conditional GET with the
// tag they hold, the history and its conditional GET. The request id is
// the caller's own, so nothing in it differs between two identical states.
func studentSees(t *testing.T, e *env, student, etag, historyTag string) string {
	t.Helper()
	tok := token(t, student, "student")
	path := "/student/" + student + "/english/grade"
	var out []string
	for _, r := range []req{
		{method: "GET", path: path},
		{method: "HEAD", path: path},
		{method: "GET", path: path, header: map[string]string{"If-None-Match": etag}},
		{method: "GET", path: path + "/history"},
		{method: "HEAD", path: path + "/history"},
		{method: "GET", path: path + "/history", header: map[string]string{"If-None-Match": historyTag}},
	} {
		r.token = tok
		if r.header == nil {
			r.header = map[string]string{}
		}
		r.header["X-Request-ID"] = "poll"
		res := e.do(r)
		h := stableHeaders(res.header)
		out = append(out, fmt.Sprintf("%s %s%s -> %d %v\n%s", r.method, r.path, r.header["If-None-Match"], res.status, h, res.body))
	}
	return strings.Join(out, "\n")
}

// tagOf is the ETag a GET of path answers the caller.
func tagOf(t *testing.T, e *env, tok, path string) string {
	t.Helper()
	r := e.do(req{method: "GET", path: path, token: tok})
	return r.header.Get("ETag")
}

// TestAStudentLearnsNothingBeforeThePost: from the attacker's side. Two
// instances share one Redis; staff change and post grades on one while a
// student polls everything they may ask on the other (GET, HEAD,
// If-None-Match, history): identical bytes and headers until the post,
// the posted grade right after it. Under the manual policy a grade never
// posted is the same 404 grade-not-posted as no grade at all.
func TestAStudentLearnsNothingBeforeThePost(t *testing.T) {
	staffSide := newEnv(t, withPolicyLines(postingLines...))
	studentSide := newEnv(t, withRedis(staffSide.rdb), withPolicyLines(postingLines...))
	seedGrades(t, staffSide) // alice B, posted (seeded grades are)
	bob, lena := token(t, "bob", "professor"), token(t, "lena", "professor")
	alice := token(t, "alice", "student")
	grade, history := "/student/alice/english/grade", "/student/alice/english/grade/history"
	if r := studentSide.do(req{method: "GET", path: "/student/ghost/english/grade", token: token(t, "ghost", "student")}); r.status != 404 ||
		!strings.Contains(r.body, `"code":"not-found"`) {
		t.Fatalf("ghost, no grade, automatic posting: %d %s", r.status, r.body)
	}
	if r := staffSide.do(req{method: "PUT", path: "/class/english-101/posting", token: lena, body: `{"policy":"manual"}`}); r.status != 200 ||
		!strings.Contains(r.body, `"policy":"manual"`) || !strings.Contains(r.body, `"unposted":0`) {
		t.Fatalf("lena turns posting manual: %d %s", r.status, r.body)
	}
	tag, htag := tagOf(t, studentSide, alice, grade), tagOf(t, studentSide, alice, history)
	before := studentSees(t, studentSide, "alice", tag, htag)
	ghostBefore := studentSees(t, studentSide, "ghost", `"1"`, `"x"`)
	if !strings.Contains(before, `"grade":"B"`) || !strings.Contains(ghostBefore, "grade-not-posted") || strings.Contains(ghostBefore, "not-found") {
		t.Fatalf("before anything:\n%s\n%s", before, ghostBefore)
	}
	// Staff change alice's grade twice, create ghost's, and upload a
	// gradebook: each is staff's to see at once, marked unposted.
	steps := []req{
		{method: "PUT", path: grade, body: `{"grade":"A"}`, header: map[string]string{"If-Match": `"1"`}},
		{method: "PUT", path: grade, body: `{"grade":"C"}`, header: map[string]string{"If-Match": `"2-unposted"`}},
		{method: "POST", path: "/student/ghost/english/grade", body: `{"grade":"C+"}`},
	}
	for i, s := range steps {
		s.token = bob
		r := staffSide.do(s)
		if r.status/100 != 2 || !strings.Contains(r.body, `"posted":false`) || !strings.HasSuffix(r.header.Get("ETag"), `-unposted"`) {
			t.Fatalf("step %d: %d %s %v", i, r.status, r.body, r.header)
		}
		if got := studentSees(t, studentSide, "alice", tag, htag); got != before {
			t.Fatalf("after step %d alice sees a difference:\nbefore\n%s\nafter\n%s", i, before, got)
		}
		if got := studentSees(t, studentSide, "ghost", `"1"`, `"x"`); got != ghostBefore {
			t.Fatalf("after step %d ghost sees a difference:\nbefore\n%s\nafter\n%s", i, ghostBefore, got)
		}
	}
	if _, a := upload(t, staffSide, bob, "", "student_id,grade,version\nalice,D,3\n"); outcomesOf(a) != "2 alice changed" {
		t.Fatalf("upload: %s", outcomesOf(a))
	}
	if got := studentSees(t, studentSide, "alice", tag, htag); got != before {
		t.Fatalf("after the upload alice sees a difference:\n%s", got)
	}
	staff := staffSide.do(req{method: "GET", path: grade, token: bob})
	if !strings.Contains(staff.body, `"grade":"D"`) || !strings.Contains(staff.body, `"posted":false`) || staff.header.Get("ETag") != `"4-unposted"` {
		t.Fatalf("staff read: %s %v", staff.body, staff.header)
	}
	if r := studentSide.do(req{method: "GET", path: "/class/english-101/posting", token: bob}); !strings.Contains(r.body, `"unposted":2`) {
		t.Fatalf("posting on the other instance: %d %s", r.status, r.body)
	}

	// lena posts: alice reads D at version 4 at once, on the other
	// instance; her history shows the versions posted to her only.
	r := staffSide.do(req{method: "POST", path: "/class/english-101/grades/post", token: lena})
	var posted struct {
		Posted   int    `json:"posted"`
		PostedBy string `json:"posted_by"`
		PostedAt string `json:"posted_at"`
	}
	if err := json.Unmarshal([]byte(r.body), &posted); err != nil || r.status != 200 || posted.Posted != 2 || posted.PostedBy != "lena" || posted.PostedAt == "" {
		t.Fatalf("post: %d %s", r.status, r.body)
	}
	after := studentSide.do(req{method: "GET", path: grade, token: alice})
	if !strings.Contains(after.body, `"grade":"D"`) || !strings.Contains(after.body, `"version":4`) || after.header.Get("ETag") != `"4"` {
		t.Fatalf("alice after the post: %s %v", after.body, after.header)
	}
	if r := studentSide.do(req{method: "GET", path: grade, token: alice, header: map[string]string{"If-None-Match": tag}}); r.status != 200 {
		t.Fatalf("alice's old tag after the post: %d", r.status)
	}
	var hist struct {
		Versions []struct {
			Version       int64   `json:"version"`
			Grade         string  `json:"grade"`
			PreviousGrade *string `json:"previous_grade"`
			PostedBy      string  `json:"posted_by"`
		} `json:"versions"`
	}
	h := studentSide.do(req{method: "GET", path: history, token: alice})
	if err := json.Unmarshal([]byte(h.body), &hist); err != nil || len(hist.Versions) != 2 ||
		hist.Versions[0].Version != 4 || hist.Versions[0].Grade != "D" || hist.Versions[0].PreviousGrade == nil ||
		*hist.Versions[0].PreviousGrade != "B" || hist.Versions[0].PostedBy != "lena" || hist.Versions[1].Version != 1 {
		t.Fatalf("alice's history after the post: %s", h.body)
	}
	if strings.Contains(h.body, `"A"`) || strings.Contains(h.body, `"C"`) {
		t.Fatalf("alice's history shows a grade never posted to her: %s", h.body)
	}
	if r := studentSide.do(req{method: "GET", path: "/student/ghost/english/grade", token: token(t, "ghost", "student")}); r.status != 200 || !strings.Contains(r.body, `"C+"`) {
		t.Fatalf("ghost after the post: %d %s", r.status, r.body)
	}
	// Staff's history has every version, each saying whether it was posted.
	sh := staffSide.do(req{method: "GET", path: history, token: bob})
	if n := strings.Count(sh.body, `"version":`); n != 4 || strings.Count(sh.body, `"posted_by":"lena"`) != 1 {
		t.Fatalf("staff history: %s", sh.body)
	}
	if !strings.Contains(staffSide.logs.String(), `"msg":"grade posted"`) {
		t.Errorf("no audit line for the post:\n%s", staffSide.logs.String())
	}
}

// outcomesOf is outcomes without the line numbers' header row.
func outcomesOf(a gradebookAnswer) string { return outcomes(a) }

// TestPostingIsAskedOfPost: the posting routes ask post (change, post)
// or view (read) on the class, and need the professor role like every
// class grant; a student never reaches them, nor the summary.
func TestPostingIsAskedOfPost(t *testing.T) {
	e := newEnv(t, withPolicyLines(postingLines...))
	seedGrades(t, e)
	cases := []struct {
		who, role    string
		read, change bool
	}{
		{"bob", "professor", true, false},  // view and update, no post
		{"lena", "professor", false, true}, // post only
		{"tara", "professor", true, true},
		{"lena", "developer", false, false}, // a class grant needs the professor role
		{"alice", "student", false, false},
		{"frank", "professor", false, false}, // another class's
	}
	for _, c := range cases {
		tok := token(t, c.who, c.role)
		for _, r := range []struct {
			req
			want bool
		}{
			{req{method: "GET", path: "/class/english-101/posting"}, c.read},
			{req{method: "GET", path: "/class/english-101/grades/summary"}, c.read},
			{req{method: "PUT", path: "/class/english-101/posting", body: `{"policy":"manual"}`}, c.change},
			{req{method: "POST", path: "/class/english-101/grades/post"}, c.change},
		} {
			r.token = tok
			res := e.do(r.req)
			if got := res.status != http.StatusForbidden; got != r.want || res.status >= 500 {
				t.Errorf("%s (%s) %s %s: %d %s, want allowed=%v", c.who, c.role, r.method, r.path, res.status, res.body, r.want)
			}
			// The posting answer tells the page whether to offer posting.
			if r.method == "GET" && r.path == "/class/english-101/posting" && res.status == http.StatusOK {
				var p struct {
					CanPost *bool `json:"can_post"`
				}
				if err := json.Unmarshal([]byte(res.body), &p); err != nil || p.CanPost == nil || *p.CanPost != c.change {
					t.Errorf("%s (%s): posting answer %s, want can_post %v", c.who, c.role, res.body, c.change)
				}
			}
		}
	}
	// The refusal is the same whether the class exists or not.
	lena := token(t, "bob", "professor")
	a := e.do(req{method: "POST", path: "/class/english-101/grades/post", token: lena, header: map[string]string{"X-Request-ID": "x"}})
	b := e.do(req{method: "POST", path: "/class/no-such-class/grades/post", token: lena, header: map[string]string{"X-Request-ID": "x"}})
	if a.status != 403 || a.body != b.body {
		t.Errorf("refusals differ:\n%s\n%s", a.body, b.body)
	}
	e.scanBodies()
}

// TestPostingNamedStudents: a post may name students: only theirs are
// posted; one not enrolled refuses the whole post (nothing posted), a
// malformed one or an empty list is a 400.
func TestPostingNamedStudents(t *testing.T) {
	e := newEnv(t, withPolicyLines(postingLines...))
	tara, bob := token(t, "tara", "professor"), token(t, "bob", "professor")
	if r := e.do(req{method: "PUT", path: "/class/english-101/posting", token: tara, body: `{"policy":"manual"}`}); r.status != 200 {
		t.Fatal(r.status, r.body)
	}
	for _, s := range []string{"alice", "ghost"} {
		if r := e.do(req{method: "POST", path: "/student/" + s + "/english/grade", token: bob, body: `{"grade":"B"}`}); r.status != 201 {
			t.Fatal(r.status, r.body)
		}
	}
	for _, c := range []struct {
		body, code string
		status     int
	}{
		{`{"students":["alice","dave"]}`, "not-in-class", 422},
		{`{"students":["al ice"]}`, "bad-identifier", 400},
		{`{"students":[]}`, "bad-parameter", 400},
		{`{"policy":"manual"}`, "malformed-body", 400},
	} {
		r := e.do(req{method: "POST", path: "/class/english-101/grades/post", token: tara, body: c.body})
		if r.status != c.status || !strings.Contains(r.body, `"code":"`+c.code+`"`) {
			t.Errorf("%s: %d %s, want %d %s", c.body, r.status, r.body, c.status, c.code)
		}
	}
	if r := e.do(req{method: "GET", path: "/class/english-101/posting", token: tara}); !strings.Contains(r.body, `"unposted":2`) {
		t.Fatalf("a refused post posted something: %s", r.body)
	}
	r := e.do(req{method: "POST", path: "/class/english-101/grades/post", token: tara, body: `{"students":["ghost","ghost"]}`})
	if r.status != 200 || !strings.Contains(r.body, `"posted":1`) {
		t.Fatalf("post ghost: %d %s", r.status, r.body)
	}
	if r := e.do(req{method: "GET", path: "/student/alice/english/grade", token: token(t, "alice", "student")}); r.status != 404 ||
		!strings.Contains(r.body, `"code":"grade-not-posted"`) {
		t.Errorf("alice after ghost's post: %d %s", r.status, r.body)
	}
	// Turning the policy automatic posts what waits, and later changes
	// are the student's at once.
	if r := e.do(req{method: "PUT", path: "/class/english-101/posting", token: tara, body: `{"policy":"automatic"}`}); r.status != 200 ||
		!strings.Contains(r.body, `"unposted":0`) {
		t.Fatalf("automatic: %d %s", r.status, r.body)
	}
	if r := e.do(req{method: "GET", path: "/student/alice/english/grade", token: token(t, "alice", "student")}); r.status != 200 {
		t.Errorf("alice after automatic: %d %s", r.status, r.body)
	}
	if r := e.do(req{method: "PUT", path: "/class/english-101/posting", token: tara, body: `{"policy":"later"}`}); r.status != 400 {
		t.Errorf("policy later: %d %s", r.status, r.body)
	}
	e.scanBodies()
}

// TestGradebookRoundTripInBothPolicies: the download (with its posted
// column) uploads back unchanged in either policy, a changed row is
// applied with its version as If-Match, and a stale If-Match is 412 in
// both.
func TestGradebookRoundTripInBothPolicies(t *testing.T) {
	for _, policy := range []string{"automatic", "manual"} {
		t.Run(policy, func(t *testing.T) {
			e := newEnv(t, withPolicyLines(postingLines...))
			seedGrades(t, e)
			bob, tara := token(t, "bob", "professor"), token(t, "tara", "professor")
			if r := e.do(req{method: "PUT", path: "/class/english-101/posting", token: tara, body: `{"policy":"` + policy + `"}`}); r.status != 200 {
				t.Fatal(r.status, r.body)
			}
			if r := e.do(req{method: "PUT", path: "/student/alice/english/grade", token: bob, body: `{"grade":"A"}`}); r.status != 200 {
				t.Fatal(r.status, r.body)
			}
			csv := e.do(req{method: "GET", path: "/class/english-101/grades", token: bob, header: map[string]string{"Accept": "text/csv"}}).body
			wantPosted := map[string]string{"automatic": "true", "manual": "false"}[policy]
			if !strings.Contains(csv, "alice,A,2,") || !strings.Contains(csv, ","+wantPosted+"\n") {
				t.Fatalf("download: %q", csv)
			}
			if _, a := upload(t, e, bob, "", csv); outcomes(a) != "2 alice unchanged|3 ghost unchanged" {
				t.Fatalf("the download uploaded back: %s", outcomes(a))
			}
			edited := strings.Replace(csv, "alice,A,2,", "alice,B+,2,", 1)
			if _, a := upload(t, e, bob, "", edited); outcomes(a) != "2 alice changed|3 ghost unchanged" {
				t.Fatalf("an edited download: %s", outcomes(a))
			}
			// The same file again: its version is old now, its grade stored.
			if _, a := upload(t, e, bob, "", edited); outcomes(a) != "2 alice unchanged|3 ghost unchanged" {
				t.Fatalf("a file already applied, uploaded again: %s", outcomes(a))
			}
			if r := e.do(req{method: "PUT", path: "/student/alice/english/grade", token: bob, body: `{"grade":"C"}`,
				header: map[string]string{"If-Match": `"2"`}}); r.status != 412 {
				t.Fatalf("stale If-Match: %d %s", r.status, r.body)
			}
			staff := e.do(req{method: "GET", path: "/student/alice/english/grade", token: bob})
			if !strings.Contains(staff.body, `"posted":`+wantPosted) {
				t.Fatalf("staff read: %s", staff.body)
			}
			if r := e.do(req{method: "PUT", path: "/student/alice/english/grade", token: bob, body: `{"grade":"C"}`,
				header: map[string]string{"If-Match": staff.header.Get("ETag")}}); r.status != 200 {
				t.Fatalf("If-Match %s: %d %s", staff.header.Get("ETag"), r.status, r.body)
			}
			hist := e.do(req{method: "GET", path: "/student/alice/english/grade/history", token: bob}).body
			if n := strings.Count(hist, `"version":`); n != 4 {
				t.Fatalf("staff history: %s", hist)
			}
			student := e.do(req{method: "GET", path: "/student/alice/english/grade", token: token(t, "alice", "student")})
			wantGrade := map[string]string{"automatic": `"grade":"C"`, "manual": `"grade":"B"`}[policy]
			if !strings.Contains(student.body, wantGrade) {
				t.Fatalf("alice reads %s, want %s", student.body, wantGrade)
			}
		})
	}
}

// TestClassSummary: the count of each grade in scale order, graded and
// enrolled, the median (the lower middle one of an even count) and the
// unposted count.
func TestClassSummary(t *testing.T) {
	lines := append([]string{"g, student:henry, class:english-101", "g, student:ivy, class:english-101"}, postingLines...)
	e := newEnv(t, withPolicyLines(lines...))
	bob, tara := token(t, "bob", "professor"), token(t, "tara", "professor")
	sum := func() string {
		r := e.do(req{method: "GET", path: "/class/english-101/grades/summary", token: bob})
		if r.status != 200 {
			t.Fatalf("summary: %d %s", r.status, r.body)
		}
		return r.body
	}
	if got := sum(); !strings.Contains(got, `"enrolled":4,"graded":0,"unposted":0,"median":null`) {
		t.Fatalf("empty class: %s", got)
	}
	for s, g := range map[string]string{"alice": "A", "ghost": "B+", "henry": "F"} {
		if r := e.do(req{method: "POST", path: "/student/" + s + "/english/grade", token: bob, body: `{"grade":"` + g + `"}`}); r.status != 201 {
			t.Fatal(r.status, r.body)
		}
	}
	got := sum()
	if !strings.Contains(got, `"enrolled":4,"graded":3,"unposted":0,"median":"B+"`) ||
		!strings.Contains(got, `"counts":[{"grade":"A+","count":0},{"grade":"A","count":1},{"grade":"A-","count":0},{"grade":"B+","count":1}`) ||
		!strings.Contains(got, `{"grade":"F","count":1}]`) {
		t.Fatalf("three graded: %s", got)
	}
	e.do(req{method: "PUT", path: "/class/english-101/posting", token: tara, body: `{"policy":"manual"}`})
	e.do(req{method: "POST", path: "/student/ivy/english/grade", token: bob, body: `{"grade":"D"}`})
	if got := sum(); !strings.Contains(got, `"enrolled":4,"graded":4,"unposted":1,"median":"D"`) {
		t.Fatalf("four graded, one waiting: %s", got)
	}
	for _, path := range []string{"/class/english-101/grades/summary", "/class/english-101/posting"} {
		get := e.do(req{method: "GET", path: path, token: bob})
		head := e.do(req{method: "HEAD", path: path, token: bob})
		if head.status != 200 || head.body != "" || head.header.Get("ETag") != get.header.Get("ETag") {
			t.Errorf("HEAD %s: %d %q %s, GET's ETag %s", path, head.status, head.body, head.header.Get("ETag"), get.header.Get("ETag"))
		}
		if r := e.do(req{method: "GET", path: path, token: bob, header: map[string]string{"If-None-Match": get.header.Get("ETag")}}); r.status != 304 {
			t.Errorf("If-None-Match on %s: %d", path, r.status)
		}
	}
	if r := e.do(req{method: "GET", path: "/class/english-101/grades/summary", token: token(t, "alice", "student")}); r.status != 403 {
		t.Errorf("a student reads the summary: %d", r.status)
	}
}
