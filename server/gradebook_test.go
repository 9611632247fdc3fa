package server_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

type gradebookAnswer struct {
	DryRun                             bool `json:"dry_run"`
	Changed, Unchanged, Stale, Refused int
	Rows                               []struct {
		Line          int     `json:"line"`
		StudentID     string  `json:"student_id"`
		Outcome       string  `json:"outcome"`
		Code          string  `json:"code"`
		PreviousGrade *string `json:"previous_grade"`
		Version       int     `json:"version"`
		UpdatedBy     string  `json:"updated_by"`
	} `json:"rows"`
}

func upload(t *testing.T, e *env, tok, query, csv string) (resp, gradebookAnswer) {
	t.Helper()
	r := e.do(req{method: "POST", path: "/class/english-101/grades" + query, token: tok, body: csv,
		header: map[string]string{"Content-Type": "text/csv"}})
	var a gradebookAnswer
	if r.status == 200 {
		if err := json.Unmarshal([]byte(r.body), &a); err != nil {
			t.Fatal(err)
		}
	}
	return r, a
}

// outcomes writes each row as "line student outcome code".
func outcomes(a gradebookAnswer) string {
	var out []string
	for _, r := range a.Rows {
		out = append(out, strings.TrimSpace(strings.Join([]string{itoa(r.Line), r.StudentID, r.Outcome, r.Code}, " ")))
	}
	return strings.Join(out, "|")
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func grade(t *testing.T, e *env, student string) string {
	t.Helper()
	return e.do(req{method: "GET", path: "/student/" + student + "/english/grade", token: token(t, "bob", "professor")}).body
}

// TestGradebookUploadDryRunThenApply: every kind of row, checked first;
// the dry run writes nothing and says what would change; the real run
// changes exactly those rows, each at its version.
func TestGradebookUploadDryRunThenApply(t *testing.T) {
	e := newEnv(t)
	seedGrades(t, e)
	bob := token(t, "bob", "professor")
	csv := "student_id,grade,version\n" +
		"alice,A-,1\n" + // changed
		"ghost,C+,\n" + // changed: created
		"dave,A,1\n" + // another class
		"b@d/id,A,1\n" + // malformed id
		"zed,Q,\n" + // not on the scale
		"nobody,A,x\n" // malformed version
	before := grade(t, e, "alice")
	r, a := upload(t, e, bob, "?dry_run=1", csv)
	want := "2 alice changed|3 ghost changed|4 dave refused not-in-class|" +
		"5 b@d/id refused bad-identifier|6 zed refused bad-grade|7 nobody refused bad-parameter"
	if r.status != 200 || !a.DryRun || outcomes(a) != want || a.Changed != 2 || a.Refused != 4 {
		t.Fatalf("dry run: %d %s\n got %s\nwant %s", r.status, r.body, outcomes(a), want)
	}
	if grade(t, e, "alice") != before || e.do(req{method: "GET", path: "/student/ghost/english/grade", token: bob}).status != 404 {
		t.Fatal("the dry run wrote")
	}
	_, a = upload(t, e, bob, "", csv)
	if outcomes(a) != want || a.DryRun || a.Rows[0].Version != 2 || *a.Rows[0].PreviousGrade != "B" || a.Rows[1].Version != 1 {
		t.Fatalf("apply: %+v", a)
	}
	if g := grade(t, e, "alice"); !strings.Contains(g, `"grade":"A-"`) || !strings.Contains(g, `"version":2`) {
		t.Errorf("alice after the upload: %s", g)
	}
	if g := grade(t, e, "ghost"); !strings.Contains(g, `"grade":"C+"`) {
		t.Errorf("ghost after the upload: %s", g)
	}
	// The same file again: the grades it names are the ones stored now,
	// whatever the versions it carries: unchanged, not stale (issue 42).
	_, a = upload(t, e, bob, "", "student_id,grade,version\nalice,A-,1\nghost,C+,\nalice2,,\n")
	if got := outcomes(a); got != "2 alice unchanged|3 ghost unchanged|4 alice2 refused not-in-class" {
		t.Errorf("the file applied, uploaded again: %s %+v", got, a.Rows)
	}
	// Other grades at those versions: alice's version 1 is now stale
	// (someone, here the first upload, changed it), ghost exists now:
	// stale too.
	_, a = upload(t, e, bob, "", "student_id,grade,version\nalice,B+,1\nghost,C,\nalice2,,\n")
	if got := outcomes(a); got != "2 alice stale version-mismatch|3 ghost stale version-mismatch|4 alice2 refused not-in-class" ||
		a.Rows[0].Version != 2 || a.Rows[0].UpdatedBy != "bob" || *a.Rows[0].PreviousGrade != "A-" {
		t.Errorf("stale rows: %s %+v", got, a.Rows)
	}
	// What is stored, at its version: unchanged, nothing written.
	_, a = upload(t, e, bob, "", "grade,version,student_id,extra\nA-,2,alice,x\n,,ghost2,\n")
	if got := outcomes(a); !strings.HasPrefix(got, "2 alice unchanged") {
		t.Errorf("unchanged row: %s", got)
	}
	if h := e.do(req{method: "GET", path: "/student/alice/english/grade/history", token: bob}); strings.Count(h.body, `"version"`) != 2 {
		t.Errorf("history after an unchanged row: %s", h.body)
	}
}

// TestGradebookUploadFromTheAttackersSide: a student, a view-only
// professor, another class's professor: nothing is written, and the first
// two learn nothing about the class.
func TestGradebookUploadFromTheAttackersSide(t *testing.T) {
	e := newEnv(t)
	seedGrades(t, e)
	csv := "student_id,grade,version\nalice,F,1\n"
	for name, tok := range map[string]string{
		"student alice":    token(t, "alice", "student"),
		"professor frank":  token(t, "frank", "professor"),
		"developer carol":  token(t, "carol", "developer"),
		"professor nobody": token(t, "nobody", "professor"),
	} {
		if r, _ := upload(t, e, tok, "", csv); r.status != 403 {
			t.Errorf("%s uploads to english-101: %d, want 403", name, r.status)
		}
	}
	// erin may view english-101 but not update it: every row refused.
	r, a := upload(t, e, token(t, "erin", "professor"), "", csv+"ghost,A,\n")
	if r.status != 200 || outcomes(a) != "2 alice refused forbidden|3 ghost refused forbidden" {
		t.Errorf("view-only erin: %d %s", r.status, r.body)
	}
	if g := grade(t, e, "alice"); !strings.Contains(g, `"grade":"B"`) {
		t.Errorf("alice's grade after the attempts: %s", g)
	}
}

// TestGradebookUploadInputRules: anti-forgery, media type, size and
// header are checked before anything else.
func TestGradebookUploadInputRules(t *testing.T) {
	e := newEnv(t)
	seedGrades(t, e)
	bob := token(t, "bob", "professor")
	path := "/class/english-101/grades"
	for name, c := range map[string]struct {
		r    req
		want int
	}{
		"no anti-forgery header": {req{method: "POST", path: path, token: bob, body: "student_id,grade,version\n",
			header: map[string]string{"Content-Type": "text/csv", "X-XSRF-TOKEN": ""}}, 403},
		"JSON body":      {req{method: "POST", path: path, token: bob, body: `{"grade":"A"}`}, 415},
		"no header row":  {req{method: "POST", path: path, token: bob, body: "alice,A,1\n", header: map[string]string{"Content-Type": "text/csv"}}, 400},
		"not CSV":        {req{method: "POST", path: path, token: bob, body: "student_id,grade,version\n\"alice,A\n", header: map[string]string{"Content-Type": "text/csv"}}, 400},
		"bad dry_run":    {req{method: "POST", path: path + "?dry_run=yes", token: bob, body: "student_id,grade,version\n", header: map[string]string{"Content-Type": "text/csv"}}, 400},
		"no token":       {req{method: "POST", path: path, body: "student_id,grade,version\n", header: map[string]string{"Content-Type": "text/csv"}}, 401},
		"foreign origin": {req{method: "POST", path: path, token: bob, body: "student_id,grade,version\n", header: map[string]string{"Content-Type": "text/csv", "Origin": "https://evil.example"}}, 403},
	} {
		if r := e.do(c.r); r.status != c.want {
			t.Errorf("%s: %d, want %d (%s)", name, r.status, c.want, r.body)
		}
	}
	e.scanBodies()
}

// TestGradebookDownloadIsSafeCSV: Accept: text/csv answers the whole class
// as CSV, with every cell a spreadsheet would run as a formula quoted, and
// the file uploads back unchanged.
func TestGradebookDownloadIsSafeCSV(t *testing.T) {
	e := newEnv(t)
	seedGrades(t, e)
	bob := token(t, "bob", "professor")
	r := e.do(req{method: "GET", path: "/class/english-101/grades", token: bob, header: map[string]string{"Accept": "text/csv"}})
	lines := strings.Split(strings.TrimSpace(r.body), "\n")
	if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/csv") || len(lines) != 3 ||
		lines[0] != "student_id,grade,version,updated_at,updated_by,posted" || !strings.HasPrefix(lines[1], "alice,B,1,") ||
		!strings.HasSuffix(lines[1], ",true") || lines[2] != "ghost,,,,," {
		t.Fatalf("download: %d %s %q", r.status, r.header.Get("Content-Type"), r.body)
	}
	if !strings.Contains(r.header.Get("Content-Disposition"), `filename="english-101-grades.csv"`) {
		t.Errorf("Content-Disposition %q", r.header.Get("Content-Disposition"))
	}
	// The download, uploaded as it is, changes nothing.
	_, a := upload(t, e, bob, "", r.body)
	if got := outcomes(a); got != "2 alice unchanged|3 ghost unchanged" {
		t.Errorf("the download uploaded back: %s", got)
	}
	if r := e.do(req{method: "GET", path: "/class/english-101/grades", token: token(t, "alice", "student"),
		header: map[string]string{"Accept": "text/csv"}}); r.status != 403 {
		t.Errorf("a student downloads the gradebook: %d", r.status)
	}
	if r := e.do(req{method: "GET", path: "/class/english-101/grades", token: bob,
		header: map[string]string{"Accept": "application/xml"}}); r.status != 406 {
		t.Errorf("Accept: application/xml: %d", r.status)
	}
}

// gradesAsStored is every seeded student's grade and history as the API
// reads them: what an upload that must not be applied must leave alone.
func gradesAsStored(t *testing.T, e *env) string {
	t.Helper()
	bob := token(t, "bob", "professor")
	var out []string
	for _, s := range []string{"alice", "ghost"} {
		out = append(out, grade(t, e, s),
			e.do(req{method: "GET", path: "/student/" + s + "/english/grade/history", token: bob}).body)
	}
	return requestIDs.ReplaceAllString(strings.Join(out, "\n"), "")
}

var requestIDs = regexp.MustCompile(`"request_id":"[^"]*"`)

// TestGradebookQueryOtherThanOneDryRunIsRefused: a misspelt, repeated or
// unreadable dry_run is a 400 naming the parameter and its rule, and the
// file (which would change alice and create ghost) is not applied.
func TestGradebookQueryOtherThanOneDryRunIsRefused(t *testing.T) {
	e := newEnv(t)
	seedGrades(t, e)
	bob := token(t, "bob", "professor")
	csv := "student_id,grade,version\nalice,A-,1\nghost,C+,\n"
	before := gradesAsStored(t, e)
	for query, want := range map[string]string{
		"?dry-run=1":             "dry-run unknown-parameter",
		"?dryRun=1":              "dryRun unknown-parameter",
		"?DRY_RUN=1":             "DRY_RUN unknown-parameter",
		"?dry_run=0&dry_run=1":   "dry_run repeated",
		"?dry_run=1&dry_run=1":   "dry_run repeated",
		"?dry_run=1&dry_run=":    "dry_run repeated",
		"?dry_run=1&confirm=1":   "confirm unknown-parameter",
		"?dry_run=1;dry_run=0":   "query unknown-parameter",
		"?dry_run=yes":           "dry_run not-flag",
		"?dry_run":               "dry_run not-flag",
		"?dry_run=":              "dry_run not-flag",
		"?dry_run=TRUE":          "dry_run not-flag",
		"?dry_run=%31%0A":        "dry_run not-flag",
		"?dry%5Frun=0&dry_run=1": "dry_run repeated",
	} {
		r, _ := upload(t, e, bob, query, csv)
		p := decodeProblem(t, r)
		if r.status != 400 || p.Code != "bad-parameter" || len(p.Errors) != 1 || p.Errors[0].Parameter+" "+p.Errors[0].Code != want {
			t.Errorf("%s: %d %s, want 400 bad-parameter %s", query, r.status, r.body, want)
		}
	}
	if after := gradesAsStored(t, e); after != before {
		t.Fatalf("a refused upload wrote:\nbefore %s\nafter  %s", before, after)
	}
	for query, dry := range map[string]bool{"?dry_run=1": true, "?dry_run=true": true} {
		if r, a := upload(t, e, bob, query, csv); r.status != 200 || a.DryRun != dry || a.Changed != 2 {
			t.Errorf("%s: %d %s", query, r.status, r.body)
		}
	}
	if after := gradesAsStored(t, e); after != before {
		t.Fatal("a dry run wrote")
	}
	if r, a := upload(t, e, bob, "?dry_run=false", csv); r.status != 200 || a.DryRun || a.Changed != 2 ||
		!strings.Contains(grade(t, e, "alice"), `"grade":"A-"`) {
		t.Errorf("?dry_run=false: %d %s", r.status, r.body)
	}
}

// TestGradebookHeaderThatCouldBeMisreadRefusesTheFile: a header naming a
// column twice (which one holds the grade?) or lacking one refuses the
// whole file, whatever the separator, and nothing is written.
func TestGradebookHeaderThatCouldBeMisreadRefusesTheFile(t *testing.T) {
	e := newEnv(t)
	seedGrades(t, e)
	bob := token(t, "bob", "professor")
	before := gradesAsStored(t, e)
	for csv, want := range map[string]string{
		"student_id,grade,version,grade\nalice,A-,1,F\n":         "grade repeated-column",
		"student_id;grade;grade;version\nalice;A-;F;1\n":         "grade repeated-column",
		"student_id,grade,version,student_id\nalice,A-,1,dave\n": "student_id repeated-column",
		"student_id,grade,version,note,note\nalice,A-,1,x,y\n":   "note repeated-column",
		"student_id, grade ,version,grade\nalice,A-,1,F\n":       "grade repeated-column",
		"student_id,grade\nalice,A-\n":                           "version missing-column",
		"student_id\tgrade\tversion\nalice\tA-\t1\n":             "student_id missing-column",
		"alice,A-,1\n": "student_id missing-column",
		"":             "student_id missing-column",
		"student_id,grade,version\n\"alice,A-,1\n": "body malformed",
	} {
		r, _ := upload(t, e, bob, "", csv)
		p := decodeProblem(t, r)
		if r.status != 400 || p.Code != "bad-gradebook" || len(p.Errors) != 1 || p.Errors[0].Parameter+" "+p.Errors[0].Code != want {
			t.Errorf("%q: %d %s, want 400 bad-gradebook %s", csv, r.status, r.body, want)
		}
	}
	if after := gradesAsStored(t, e); after != before {
		t.Fatalf("a refused file wrote:\nbefore %s\nafter  %s", before, after)
	}
}

// TestGradebookStudentOnTwoLinesIsRefusedOnBoth: which of two rows for
// one student was meant cannot be known, so neither is applied (not the
// first, not the last); the file's other rows are.
func TestGradebookStudentOnTwoLinesIsRefusedOnBoth(t *testing.T) {
	e := newEnv(t)
	seedGrades(t, e)
	bob := token(t, "bob", "professor")
	before := grade(t, e, "alice")
	r, a := upload(t, e, bob, "", "student_id,grade,version\nalice,A-,1\nghost,C+,\nalice,F,1\nalice,Q,1\n")
	if got, want := outcomes(a), "2 alice refused duplicate-student|3 ghost changed|4 alice refused duplicate-student|5 alice refused bad-grade"; r.status != 200 || got != want || a.Refused != 3 || a.Changed != 1 {
		t.Fatalf("%d %s\n got %s\nwant %s", r.status, r.body, got, want)
	}
	if got := grade(t, e, "alice"); got != before {
		t.Errorf("alice's grade after two rows for her: %s, was %s", got, before)
	}
	if !strings.Contains(grade(t, e, "ghost"), `"grade":"C+"`) {
		t.Error("ghost's row, alone, was not applied")
	}
}

// TestGradebookSeparatedBySemicolons: the file Excel writes in a European
// locale (BOM, ';', CRLF, quoted cells) is read as the comma one is.
func TestGradebookSeparatedBySemicolons(t *testing.T) {
	e := newEnv(t)
	seedGrades(t, e)
	bob := token(t, "bob", "professor")
	csv := "\uFEFFstudent_id;grade;version;updated_at;updated_by\r\nalice;\"A-\";1;2026-11-23T08:00:00Z;bob\r\nghost;C+;;;\r\n"
	r, a := upload(t, e, bob, "?dry_run=1", csv)
	if got := outcomes(a); r.status != 200 || got != "2 alice changed|3 ghost changed" {
		t.Fatalf("dry run of a ;-separated file: %d %s", r.status, r.body)
	}
	if _, a = upload(t, e, bob, "", csv); outcomes(a) != "2 alice changed|3 ghost changed" ||
		!strings.Contains(grade(t, e, "alice"), `"grade":"A-"`) || !strings.Contains(grade(t, e, "ghost"), `"grade":"C+"`) {
		t.Fatalf("applied: %+v", a)
	}
}
