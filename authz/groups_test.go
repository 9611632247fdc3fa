package authz

import (
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/casbin/casbin/v2"

	facade "github.com/facade-dev/facade"
	"github.com/facade-dev/facade/authz/compiled"
	"github.com/facade-dev/facade/authz/internal/policytest"
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
		if got := a.CanViewProject(c.p, projectKey(c.project)); got != c.want {
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
	if !a.CanViewAccount(facade.Principal{ID: "yan", Groups: []string{"ops"}}, accountID("1001")) {
		t.Error("group:ops does not grant view_account on account:1001")
	}
}

// withLines writes policyPath plus "g, <ID>, group:<name>" per group of p
// (quoted by casbin's CSV rules) and returns the new file.
func withLines(t *testing.T, policyPath string, p facade.Principal) string {
	t.Helper()
	b := readFile(t, policyPath)
	for _, g := range p.Groups {
		b += "g, " + p.ID + ", " + policytest.CSVField("group:"+g) + "\n"
	}
	out := filepath.Join(t.TempDir(), "policy.csv")
	policytest.WriteFile(t, out, b)
	return out
}

// providerGroups are group names real identity providers send, each
// granted one project in providerPolicy, next to names an attacker would
// pick to look like them.
var providerGroups = map[string]string{
	"acme:payments":                        "PAY",  // GitHub teams, org:team
	"team-a/admins":                        "ADM",  // GitLab subgroups
	"Domain Users":                         "DOM",  // LDAP / Active Directory
	"8c1e5a2b-0f3d-4e6a-9b7c-2d1f0e9a8b7c": "ENT",  // Entra object ids
	"a,b":                                  "AB",   // a comma: one name, not a list
	`say "hi"`:                             "HI",   // quotes
	"trailing ":                            "TR",   // a space at the end
	"acme":                                 "ACME", // a prefix of acme:payments
	"Domain":                               "DOMA", // a word of Domain Users
	"*":                                    "STAR", // a name that is a wildcard elsewhere
	"Überweisungen – Team":                 "UTF",  // not ASCII
	strings.Repeat("x", 256):               "LONG", // the longest name
}

func providerPolicy() []string {
	lines := slices.Clone(groupPolicy)
	for _, name := range slices.Sorted(maps.Keys(providerGroups)) {
		lines = append(lines, "p, "+policytest.CSVField("group:"+name)+", project:"+providerGroups[name]+", view")
	}
	return lines
}

// TestAnyGroupNameAProviderSendsGrantsExactlyItsLines: a token carrying
// any group name a provider sends gets that group's lines, written with
// casbin's CSV quoting, and nothing else, as stock casbin decides the
// same files with "g, <sub>, group:<name>" added; names that look like
// another after quoting (a prefix, a word, the quotes themselves, a
// space more, a list) get nothing of the other's.
func TestAnyGroupNameAProviderSendsGrantsExactlyItsLines(t *testing.T) {
	a, policyPath := newAuthorizer(t, providerPolicy()...)
	projects := []string{"DEV", "PROJ", "ANN"}
	for _, p := range providerGroups {
		projects = append(projects, p)
	}
	lookalikes := []string{
		"acme:payments:x", "acme:", "group:acme:payments", "acme:payments ", " acme:payments",
		"Domain Users ", "Domain  Users", "Domain\u00a0Users", `"Domain Users"`, "domain users",
		"a", "b", "a, b", `"a,b"`, `say ""hi""`, "trailing", "trailing  ", "**", "x*", "Users",
		strings.Repeat("x", 255), "acme:payments,Domain Users",
	}
	for _, name := range append(slices.Collect(maps.Keys(providerGroups)), lookalikes...) {
		p := facade.Principal{ID: "mallory", Groups: []string{name}}
		stock, err := casbin.NewEnforcer(filepath.Join(filepath.Dir(policyPath), "model.conf"), withLines(t, policyPath, p))
		if err != nil {
			t.Fatal(err)
		}
		granted := 0
		for _, project := range projects {
			got := a.CanViewProject(p, projectKey(project))
			want, _ := stock.Enforce(p.ID, "project:"+project, "view")
			if got != want {
				t.Errorf("group %q on project:%s: service %v, stock casbin %v", name, project, got, want)
			}
			if got {
				granted++
				if providerGroups[name] != project {
					t.Errorf("group %q granted project:%s, another group's", name, project)
				}
			}
		}
		if _, own := providerGroups[name]; own != (granted == 1) {
			t.Errorf("group %q granted %d projects", name, granted)
		}
	}
}

// TestGroupNamesNoTokenCanCarryGrantNothing: names with a control
// character, empty or over 256 characters are dropped from the subject
// (never rewritten into another name), and a bad name next to a good one
// does not drop the good one.
func TestGroupNamesNoTokenCanCarryGrantNothing(t *testing.T) {
	a, _ := newAuthorizer(t, append(groupPolicy, "p, group:x y, project:XY, view")...)
	for _, name := range []string{"", "devs\n", "devs\x00", "\tdevs", "x\ty", "x\u200by", "x\u202ey", "de\x7fvs", "\xffdevs", strings.Repeat("d", 257)} {
		p := facade.Principal{ID: "mallory", Groups: []string{name}}
		if q := compiled.SubjectOf(p); len(q.Groups) != 0 {
			t.Errorf("group %q kept as %q", name, q.Groups)
		}
		for _, project := range []string{"DEV", "XY", "PROJ"} {
			if a.CanViewProject(p, projectKey(project)) {
				t.Errorf("group %q granted project:%s", name, project)
			}
		}
	}
	if !a.CanViewProject(facade.Principal{ID: "mallory", Groups: []string{"x\ny", "devs"}}, projectKey("DEV")) {
		t.Error("a bad name next to a good one must not drop the good one")
	}
}

// TestGroupsOnTheCasbinPath: a model the index does not decide gets the
// same token-group semantics from casbin's own Enforce (the lines are
// added for the question and removed), under concurrent questions.
func TestGroupsOnTheCasbinPath(t *testing.T) {
	dir := t.TempDir()
	modelPath, policyPath := filepath.Join(dir, "model.conf"), filepath.Join(dir, "policy.csv")
	policytest.WriteFile(t, modelPath, policytest.AbacModel)
	policytest.WriteFile(t, policyPath, "p, group:devs, account:1001, view_account\ng, bob, group:devs\n")
	a, err := New(modelPath, policyPath, Config{Log: discardLogger()})
	if err != nil || a.Status().Decider != compiled.DeciderCasbin {
		t.Fatalf("New: %v, decider %q", err, a.Status().Decider)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				if !a.CanViewAccount(facade.Principal{ID: "zoe", Groups: []string{"devs"}}, accountID("1001")) {
					t.Error("zoe with group devs denied")
					return
				}
				if a.CanViewAccount(facade.Principal{ID: "zoe"}, accountID("1001")) {
					t.Error("zoe without groups allowed: a token's line outlived its question")
					return
				}
				// bob's own line must survive a question that carries it too
				if !a.CanViewAccount(facade.Principal{ID: "bob", Groups: []string{"devs"}[:i%2]}, accountID("1001")) {
					t.Error("bob denied")
					return
				}
			}
		}()
	}
	wg.Wait()
	if !a.CanViewAccount(facade.Principal{ID: "bob"}, accountID("1001")) {
		t.Fatal("bob's policy line was removed with a token's")
	}
}
