package authz

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestExplainCitesTheDecidingLines(t *testing.T) {
	modelPath, policyPath := policyFiles(t, specPolicy...)
	// cite returns "policy.csv:N: text" for the line of specPolicy holding text.
	cite := func(text string) string {
		for i, l := range specPolicy {
			if l == text {
				return fmt.Sprintf("%s:%d: %s", policyPath, i+1, text)
			}
		}
		t.Fatalf("no line %q in specPolicy", text)
		return ""
	}
	cases := []struct {
		sub, role, obj, act string
		allow               bool
		lines               []string
	}{
		{"bob", "professor", "student:alice", "update", true, []string{
			cite("g, student:alice, class:english-101"),
			cite("p, bob, class:english-101, update"),
		}},
		{"ivan", "professor", "student:zoe", "update", true, []string{
			cite("g, student:zoe, class:history-1"),
			cite("g, ivan, team:inner"),
			cite("g, team:inner, team:outer"),
			cite("p, team:outer, class:history-1, update"),
		}},
		{"carol", "developer", "project:PROJ", "view", true, []string{
			cite("g, carol, team:platform"),
			cite("p, team:platform, project:PROJ, view"),
		}},
		{"carol", "", "plan:WEB-NIGHTLY", "view", true, []string{cite("p, carol, plan:WEB-NIGHTLY, view")}},
		{"carol", "", "plan:PROJ-ANY", "view", true, []string{
			cite("g, carol, team:platform"),
			cite("p, team:platform, project:PROJ, view"),
		}},
		{"alice", "", "account:1001", "transfer", true, []string{cite("p, alice, account:1001, transfer")}},
	}
	for _, c := range cases {
		allow, lines, err := Explain(modelPath, policyPath, c.sub, c.role, c.obj, c.act)
		if err != nil {
			t.Fatalf("%v: %v", c, err)
		}
		if allow != c.allow || !reflect.DeepEqual(lines, c.lines) {
			t.Errorf("%s %s %s %s:\n got %v %q\nwant %v %q", c.sub, c.role, c.obj, c.act, allow, lines, c.allow, c.lines)
		}
	}
}

func TestExplainNotesBuiltInRulesAndDenials(t *testing.T) {
	modelPath, policyPath := policyFiles(t, specPolicy...)
	cases := []struct {
		sub, role, obj, act string
		allow               bool
		note                string
	}{
		{"alice", "student", "student:alice", "view", true, "role student views their own grade"},
		{"alice", "student", "student:alice", "update", false, "role student never writes grades"},
		{"alice", "student", "student:dave", "view", false, "views only their own grade"},
		{"sam", "staff", "student:alice", "view", false, `not role "staff"`},
		{"bob", "professor", "student:dave", "view", false, "no policy line grants view on any class student:dave is enrolled in (class:math-201)"},
		{"bob", "professor", "student:ghost", "view", false, "student:ghost is not enrolled in any class"},
		{"ivan", "", "account:1001", "view_account", false, "no policy line grants view_account on account:1001 to ivan or its groups (team:inner, team:outer)"},
		{"mallory", "", "plan:WEB-RELEASE", "view", false, "no policy line grants view on plan:WEB-RELEASE or on project:WEB to mallory"},
	}
	for _, c := range cases {
		allow, lines, err := Explain(modelPath, policyPath, c.sub, c.role, c.obj, c.act)
		if err != nil {
			t.Fatalf("%v: %v", c, err)
		}
		if allow != c.allow || len(lines) != 1 || !strings.HasPrefix(lines[0], "# ") || !strings.Contains(lines[0], c.note) {
			t.Errorf("%s %s %s %s: got %v %q, want %v and a note with %q", c.sub, c.role, c.obj, c.act, allow, lines, c.allow, c.note)
		}
	}
}

func TestExplainRefusesMalformedQuestionsAndBrokenFiles(t *testing.T) {
	modelPath, policyPath := policyFiles(t, specPolicy...)
	for _, q := range [][2]string{
		{"acount:1001", "view_account"},
		{"account:1001", "view"},
		{"project:proj", "view"},
		{"student:alice", "transfer"},
		{"student:a/b", "view"},
	} {
		if _, _, err := Explain(modelPath, policyPath, "alice", "", q[0], q[1]); err == nil {
			t.Errorf("Explain accepted %s %s", q[0], q[1])
		}
	}
	writeFile(t, policyPath, "p, alice, account:1001, view_account\np, alice\n")
	_, _, err := Explain(modelPath, policyPath, "alice", "", "account:1001", "view_account")
	if err == nil || !strings.Contains(err.Error(), policyPath+":2: ") {
		t.Fatalf("Explain on a broken file: err = %v, want it to name %s:2", err, policyPath)
	}
}
