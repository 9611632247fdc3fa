package authz

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestShippedFilesPassCheck(t *testing.T) {
	if problems := Check("../model.conf", "../policy.csv"); len(problems) != 0 {
		t.Fatalf("shipped files have problems: %v", problems)
	}
	a, err := New("../model.conf", "../policy.csv", nil)
	if err != nil {
		t.Fatal(err)
	}
	// The SPEC section 3 example lines are in the shipped policy.
	if !a.CanWriteGrade(facadePrincipal("bob", "professor"), "alice") ||
		!a.CanTransfer(facadePrincipal("alice", ""), "1001", "2002") ||
		!a.CanViewProject(facadePrincipal("carol", ""), "PROJ") ||
		!a.CanViewPlan(facadePrincipal("carol", ""), "WEB", "NIGHTLY") {
		t.Fatal("shipped policy lacks a SPEC section 3 grant")
	}
}

func TestCheckReportsEachProblemOnItsLine(t *testing.T) {
	modelPath, policyPath := policyFiles(t,
		"# a comment",                               // 1
		"p, bob, class:english-101, view",           // 2
		"p, bob, class:english-101",                 // 3
		"x, bob, class:english-101",                 // 4
		"p, bob, class:english-101, veiw",           // 5
		"p, bob, acount:1001, view_account",         // 6
		"p, bob, account:10 01, view_account",       // 7
		"p, bob, project:proj, view",                // 8
		"p, bob, plan:WEB_NIGHTLY, view",            // 9
		"p, bob, project:PROJ, transfer",            // 10
		"g, student:alice, team:x",                  // 11
		"g, bob, class:english-101",                 // 12
		"p, student:alice, account:1, view_account", // 13
		"  p,bob ,  class:english-101 , view  ",     // 14: duplicate of 2, spacing aside
		"",                                          // 15
		"p, *, project:PROJ, view",                  // 16
		"g, carol, teamplatform",                    // 17
		`p, "bob", account:1, transfer`,             // 18
		"g, team:a, team:a",                         // 19
		"p, bob, , view",                            // 20
		"g, carol, user:carol",                      // 21
		"g, student:al/ice, class:x",                // 22
		"p, bob, plan:WEB-NIGHTLY, view, extra",     // 23
		"p, team:platform, project:PROJ, view",      // 24: fine
	)
	want := map[int]string{
		3:  "a p line has 3 fields",
		4:  `unknown line type "x"`,
		5:  `unknown action "veiw"`,
		6:  `unknown object "acount:1001"`,
		7:  "malformed id",
		8:  "malformed project key",
		9:  "malformed plan",
		10: `action "transfer" does not apply to project: objects`,
		11: "enrolls in a class",
		12: "only students join a class",
		13: "student: names only appear in enrollment lines",
		14: "warning: duplicate of line 2",
		16: "wildcards are not supported",
		17: `group "teamplatform"`,
		18: "quoted fields are not supported",
		19: "member of itself",
		20: "field 3 is empty",
		21: `group "user:carol"`,
		22: "malformed student id",
		23: "a p line has 3 fields",
	}
	problems := Check(modelPath, policyPath)
	got := map[int]string{}
	for _, p := range problems {
		if p.File != policyPath {
			t.Errorf("problem in %s, want %s: %v", p.File, policyPath, p)
		}
		got[p.Line] = p.String()
	}
	for line, fragment := range want {
		s, ok := got[line]
		if !ok {
			t.Errorf("line %d: no problem reported, want one containing %q", line, fragment)
			continue
		}
		if prefix := policyPath + ":" + strconv.Itoa(line) + ": "; !strings.HasPrefix(s, prefix) {
			t.Errorf("line %d: %q does not start with %q", line, s, prefix)
		}
		if !strings.Contains(s, fragment) {
			t.Errorf("line %d: %q does not mention %q", line, s, fragment)
		}
	}
	for line, s := range got {
		if _, expected := want[line]; !expected {
			t.Errorf("unexpected problem: %s", s)
		}
	}
	if !HasErrors(problems) {
		t.Error("HasErrors is false for a file with errors")
	}
}

func TestDuplicatesWarnButLoad(t *testing.T) {
	modelPath, policyPath := policyFiles(t,
		"p, alice, account:1001, view_account",
		"p, alice, account:1001, view_account")
	problems := Check(modelPath, policyPath)
	if len(problems) != 1 || !problems[0].Warning || HasErrors(problems) {
		t.Fatalf("problems = %v, want one warning", problems)
	}
	a, err := New(modelPath, policyPath, nil)
	if err != nil {
		t.Fatalf("a file with only a duplicate was refused: %v", err)
	}
	if st := a.Status(); st.Rules != 1 {
		t.Errorf("rules = %d, want 1 (duplicate dropped)", st.Rules)
	}
}

func TestNewNamesFileAndLine(t *testing.T) {
	modelPath, policyPath := policyFiles(t,
		"p, alice, account:1001, view_account",
		"p, alice, account:1001, veiw",
		"q, alice")
	_, err := New(modelPath, policyPath, nil)
	if err == nil {
		t.Fatal("New accepted a broken policy")
	}
	if msg := err.Error(); !strings.Contains(msg, policyPath+":2: ") || !strings.Contains(msg, "and 1 more") {
		t.Fatalf("error %q does not name %s:2 and the count", msg, policyPath)
	}
}

func TestCheckRefusesAModelThatMeansSomethingElse(t *testing.T) {
	classic := strings.Replace(shippedModel(t),
		`m = g("user:" + r.sub, r.obj + " " + r.act)`,
		"m = g(r.sub, p.sub) && r.obj == p.obj && r.act == p.act", 1)
	noEnroll := strings.Replace(shippedModel(t), "g2 = _, _", "", 1)
	extra := shippedModel(t) + "\n[role_definition]\ng3 = _, _\n"
	cases := []struct {
		name, text, fragment string
		line                 func(text string) int
	}{
		{"classic matcher", classic, "m must be", func(s string) int { return lineOfKey(s, "m") }},
		{"missing g2", noEnroll, "missing g2", func(string) int { return 0 }},
		{"extra g3", extra, "unexpected definition g3", func(s string) int { return lineOfKey(s, "g3") }},
		{"not a model", "[request_definition]\nr = sub\n", "not a valid casbin model", func(string) int { return 0 }},
	}
	for _, c := range cases {
		modelPath, policyPath := policyFiles(t, "p, alice, account:1001, view_account")
		writeFile(t, modelPath, c.text)
		problems := Check(modelPath, policyPath)
		found := false
		for _, p := range problems {
			if p.File == modelPath && strings.Contains(p.Msg, c.fragment) && p.Line == c.line(c.text) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: problems %v lack %q at line %d", c.name, problems, c.fragment, c.line(c.text))
		}
		if _, err := New(modelPath, policyPath, nil); err == nil {
			t.Errorf("%s: New accepted the model", c.name)
		}
	}
	if lineOfKey(classic, "m") == 0 {
		t.Fatal("test model lost its matcher line")
	}
}

func TestCheckNamesMissingFiles(t *testing.T) {
	dir := t.TempDir()
	problems := Check(filepath.Join(dir, "model.conf"), filepath.Join(dir, "policy.csv"))
	if len(problems) != 2 || !strings.Contains(problems[0].String(), "model.conf: cannot read") {
		t.Fatalf("problems = %v", problems)
	}
}

func TestSelfTestPassesOnShippedModel(t *testing.T) {
	if p := selfTest("model.conf", shippedModel(t)); p != nil {
		t.Fatal(p)
	}
}
