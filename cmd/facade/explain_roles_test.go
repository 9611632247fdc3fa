package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPolicyExplainTakesEveryRole: `facade policy explain` takes the roles
// a list role claim gives (--role student,professor), prints them, and
// answers as the service does for a student-professor: their class's
// grades, their own grade read, never written.
func TestPolicyExplainTakesEveryRole(t *testing.T) {
	policy := filepath.Join(t.TempDir(), "policy.csv")
	lines := "p, tara, class:english-101, view\np, tara, class:english-101, update\ng, student:tara, class:english-101\ng, student:alice, class:english-101\n"
	if err := os.WriteFile(policy, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	env := settingsFrom(map[string]string{"FACADE_MODEL": "../../model.conf", "FACADE_POLICY": policy})
	for _, c := range []struct {
		student, act string
		code         int
		says         string
	}{
		{"alice", "update", 0, "roles of tara: professor, student"},
		{"tara", "view", 0, "allow"},
		{"tara", "update", 1, "nobody changes their own grade"},
	} {
		code, out, stderr := runCmd(env, "policy", "explain", "--sub", "tara", "--role", "student,professor", "--grade", c.student, "--act", c.act)
		if code != c.code || !strings.Contains(out, c.says) {
			t.Errorf("%s %s's grade: exit %d, want %d and %q:\n%s%s", c.act, c.student, code, c.code, c.says, out, stderr)
		}
	}
}

// TestPolicyExplainSaysGroupsCouldNotBeChecked: for a principal whose
// groups did not fit in the token (overage), explain says that group
// grants could not be checked, and answers as the service does: without
// the groups given.
func TestPolicyExplainSaysGroupsCouldNotBeChecked(t *testing.T) {
	env := settingsFrom(map[string]string{"FACADE_MODEL": "../../model.conf", "FACADE_POLICY": "../../policy.csv"})
	code, out, _ := runCmd(env, "policy", "explain", "--sub", "zoe", "--group", "english-graders", "--grade", "alice", "--act", "view", "--role", "professor")
	if code != 0 {
		t.Fatalf("with the group: exit %d\n%s", code, out)
	}
	code, out, _ = runCmd(env, "policy", "explain", "--sub", "zoe", "--group", "english-graders", "--groups-incomplete", "--grade", "alice", "--act", "view", "--role", "professor")
	if code != 1 || !strings.Contains(out, "group grants could not be checked") || !strings.Contains(out, "zoe") {
		t.Fatalf("groups incomplete: exit %d, want 1 and the note:\n%s", code, out)
	}
}
