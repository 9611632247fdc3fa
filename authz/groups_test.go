package authz

import (
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/casbin/casbin/v2"

	facade "github.com/facade-dev/facade"
)

// groupPolicy grants through token groups: group:devs sees project DEV,
// group:devs is part of team:platform (which sees PROJ), and group:ops
// holds a deny rule's target elsewhere.
var groupPolicy = []string{
	"p, group:devs, project:DEV, view",
	"g, group:devs, team:platform",
	"p, team:platform, project:PROJ, view",
	"p, group:ops, account:1001, view_account",
	"p, ann, project:ANN, view",
}

// TestTokenGroupsGrantAsCasbinWithGLinesAdded: a principal carrying groups
// is decided as stock casbin decides the same files with
// "g, <sub>, group:<name>" added, through the Authorizer's own questions.
func TestTokenGroupsGrantAsCasbinWithGLinesAdded(t *testing.T) {
	a, policyPath := newAuthorizer(t, groupPolicy...)
	dev := facade.Principal{ID: "zoe", Role: "developer", Groups: []string{"devs"}}
	cases := []struct {
		p       facade.Principal
		project string
		want    bool
	}{
		{dev, "DEV", true},
		{dev, "PROJ", true}, // through group:devs -> team:platform
		{dev, "ANN", false},
		{facade.Principal{ID: "zoe"}, "DEV", false}, // the same principal without the group
		{facade.Principal{ID: "zoe", Groups: []string{"ops"}}, "DEV", false},
	}
	for _, c := range cases {
		if got := a.CanViewProject(c.p, c.project); got != c.want {
			t.Errorf("%+v on project:%s = %v, want %v", c.p, c.project, got, c.want)
		}
		stock, err := casbin.NewEnforcer(filepath.Join(filepath.Dir(policyPath), "model.conf"), withLines(t, policyPath, c.p))
		if err != nil {
			t.Fatal(err)
		}
		if want, _ := stock.Enforce(c.p.ID, "project:"+c.project, "view"); want != c.want {
			t.Errorf("stock casbin with g lines added: %+v on project:%s = %v, want %v", c.p, c.project, want, c.want)
		}
	}
	if !a.CanViewAccount(facade.Principal{ID: "yan", Groups: []string{"ops"}}, "1001") {
		t.Error("group:ops does not grant view_account on account:1001")
	}
}

// withLines writes policyPath plus "g, <ID>, group:<name>" per group of p
// and returns the new file.
func withLines(t *testing.T, policyPath string, p facade.Principal) string {
	t.Helper()
	b := readFile(t, policyPath)
	for _, g := range p.Groups {
		b += "g, " + p.ID + ", group:" + g + "\n"
	}
	out := filepath.Join(t.TempDir(), "policy.csv")
	writeFile(t, out, b)
	return out
}

// TestGroupNamesCannotInject: a group name that is not a plain name grants
// nothing: no list ("devs, ops"), no colon trick ("devs:x", ":devs"), no
// pattern, no other subject's name through the prefix.
func TestGroupNamesCannotInject(t *testing.T) {
	a, _ := newAuthorizer(t, append(groupPolicy,
		"p, group:devs:x, project:X, view",
		"p, group:*, project:STAR, view",
		"p, group:, project:EMPTY, view",
	)...)
	for _, c := range []struct {
		group, project string
	}{
		{"devs, ops", "DEV"}, {"devs,ops", "DEV"}, {"devs:x", "X"}, {"*", "STAR"}, {"", "EMPTY"},
		{" devs", "DEV"}, {"devs\n", "DEV"}, {"../devs", "DEV"},
		{strings.Repeat("d", 65), "DEV"},
	} {
		p := facade.Principal{ID: "mallory", Groups: []string{c.group}}
		if a.CanViewProject(p, c.project) {
			t.Errorf("group %q granted project:%s", c.group, c.project)
		}
	}
	if !a.CanViewProject(facade.Principal{ID: "mallory", Groups: []string{"x y", "devs"}}, "DEV") {
		t.Error("a bad name next to a good one must not drop the good one")
	}
}

// TestGroupsOnTheCasbinPath: a model the index does not decide gets the
// same token-group semantics from casbin's own Enforce (the lines are
// added for the question and removed), under concurrent questions.
func TestGroupsOnTheCasbinPath(t *testing.T) {
	dir := t.TempDir()
	modelPath, policyPath := filepath.Join(dir, "model.conf"), filepath.Join(dir, "policy.csv")
	writeFile(t, modelPath, abacModel)
	writeFile(t, policyPath, "p, group:devs, account:1001, view_account\ng, bob, group:devs\n")
	a, err := New(modelPath, policyPath, discardLogger())
	if err != nil || a.Status().Decider != deciderCasbin {
		t.Fatalf("New: %v, decider %q", err, a.Status().Decider)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				if !a.CanViewAccount(facade.Principal{ID: "zoe", Groups: []string{"devs"}}, "1001") {
					t.Error("zoe with group devs denied")
					return
				}
				if a.CanViewAccount(facade.Principal{ID: "zoe"}, "1001") {
					t.Error("zoe without groups allowed: a token's line outlived its question")
					return
				}
				// bob's own line must survive a question that carries it too
				if !a.CanViewAccount(facade.Principal{ID: "bob", Groups: []string{"devs"}[:i%2]}, "1001") {
					t.Error("bob denied")
					return
				}
			}
		}()
	}
	wg.Wait()
	if !a.CanViewAccount(facade.Principal{ID: "bob"}, "1001") {
		t.Fatal("bob's policy line was removed with a token's")
	}
}
