package server_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/facade-dev/facade/grades"
)

// denyModel is model.conf with deny rules, made as its own comment says:
// an eft column on p lines and the allow-and-not-deny effect.
func denyModel(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(modelFile)
	if err != nil {
		t.Fatal(err)
	}
	m := strings.Replace(string(b), "\np = sub, obj, act\n", "\np = sub, obj, act, eft\n", 1)
	m = strings.Replace(m, "\ne = some(where (p.eft == allow))\n", "\ne = some(where (p.eft == allow)) && !some(where (p.eft == deny))\n", 1)
	if m == string(b) || !strings.Contains(m, "eft\n") || !strings.Contains(m, "!some") {
		t.Fatal("model.conf no longer has the lines this test turns into a deny model")
	}
	return m
}

// TestClassPageHonoursDenyRules: a deny line on one enrolled student
// removes that student from the professor's class page (and its count),
// while the class stays listed and the other students stay on it. With the
// allow-only model every enrolled student is always shown, so only a deny
// model proves the per-student check.
func TestClassPageHonoursDenyRules(t *testing.T) {
	e := newEnv(t, withModel(denyModel(t), `p, bob, class:english-101, view, allow
p, bob, class:english-101, update, allow
p, bob, student:alice, view, deny
g, student:alice, class:english-101
g, student:ghost, class:english-101
g, student:zoe, class:english-101
`))
	seedGrades(t, e)
	bob := token(t, "bob", "professor")

	if r := e.do(req{method: "GET", path: "/class", token: bob}); r.status != 200 || !strings.Contains(r.body, `"english-101"`) {
		t.Fatalf("bob's classes: %d %s", r.status, r.body)
	}
	r := e.do(req{method: "GET", path: "/class/english-101/grades", token: bob})
	if r.status != 200 {
		t.Fatalf("bob's class: %d %s", r.status, r.body)
	}
	var page classGrades
	if err := json.Unmarshal([]byte(r.body), &page); err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, s := range page.Students {
		listed = append(listed, s.StudentID)
	}
	if strings.Join(listed, ",") != "ghost,zoe" || page.Size != 2 {
		t.Errorf("bob's english-101 lists %v (size %d), want [ghost zoe] (size 2): alice is denied to him", listed, page.Size)
	}
	if strings.Contains(r.body, "alice") {
		t.Errorf("the class page names the denied student: %s", r.body)
	}
	if r := e.do(req{method: "GET", path: "/student/alice/english/grade", token: bob}); r.status != 403 {
		t.Errorf("bob reads alice's grade: %d, want 403", r.status)
	}
}

// TestClassGradebookHonoursDenyRules: the class as CSV leaves out a
// student denied to the professor, and an upload cannot change a grade the
// professor is denied: the row is refused, the stored grade unchanged.
func TestClassGradebookHonoursDenyRules(t *testing.T) {
	e := newEnv(t, withModel(denyModel(t), `p, bob, class:english-101, view, allow
p, bob, class:english-101, update, allow
p, bob, student:alice, view, deny
p, bob, student:zoe, update, deny
p, erin, class:english-101, view, allow
g, student:alice, class:english-101
g, student:ghost, class:english-101
g, student:zoe, class:english-101
`))
	seedGrades(t, e)
	bob := token(t, "bob", "professor")

	r := e.do(req{method: "GET", path: "/class/english-101/grades", token: bob, header: map[string]string{"Accept": "text/csv"}})
	if r.status != 200 {
		t.Fatalf("bob's gradebook: %d %s", r.status, r.body)
	}
	var students []string
	for _, line := range strings.Split(strings.TrimSpace(r.body), "\n")[1:] {
		students = append(students, strings.SplitN(line, ",", 2)[0])
	}
	if strings.Join(students, ",") != "ghost,zoe" || strings.Contains(r.body, "alice") {
		t.Errorf("bob's gradebook lists %v, want [ghost zoe]: alice is denied to him\n%s", students, r.body)
	}

	if _, err := grades.NewStore(e.rdb, grades.Config{Log: quietLog}).Seed(context.Background(), studentID("zoe"), grades.SubjectEnglish, parsedGrade("B")); err != nil {
		t.Fatal(err)
	}
	_, a := upload(t, e, bob, "", "student_id,grade,version\nzoe,A,1\nalice,A,1\n")
	if got := outcomes(a); got != "2 zoe refused forbidden|3 alice refused not-in-class" {
		t.Errorf("upload outcomes %q, want zoe forbidden (update denied) and alice not in bob's class view", got)
	}
	if after := e.do(req{method: "GET", path: "/student/zoe/english/grade", token: token(t, "erin", "professor")}); !strings.Contains(after.body, `"grade":"B"`) {
		t.Errorf("zoe's grade changed through a denied upload: %d %s", after.status, after.body)
	}
}
