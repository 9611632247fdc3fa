package authz

import (
	"fmt"
	"sync"
	"testing"

	facade "github.com/facade-dev/facade"
	"github.com/facade-dev/facade/authz/internal/policytest"
)

// specPolicy is docs/contract.md §3's example plus the lines the table needs.
var specPolicy = []string{
	"# docs/contract.md §3",
	"p, bob, class:english-101, view",
	"p, bob, class:english-101, update",
	"g, student:alice, class:english-101",
	"p, alice, account:1001, view_account",
	"p, alice, account:1001, transfer",
	"p, alice, account:2002, transfer",
	"p, team:platform, project:PROJ, view",
	"p, carol, plan:WEB-NIGHTLY, view",
	"g, carol, team:platform",
	"",
	"# erin holds view only on english-101",
	"p, erin, class:english-101, view",
	"# dave is enrolled elsewhere",
	"g, student:dave, class:math-201",
	"# a policy line cannot make a student a grade writer",
	"p, alice, class:english-101, update",
	"# ivan is in team:inner, which is in team:outer (two levels)",
	"g, ivan, team:inner",
	"g, team:inner, team:outer",
	"p, team:outer, class:history-1, update",
	"p, team:outer, account:5005, view_account",
	"p, team:outer, project:DEEP, view",
	"g, student:zoe, class:history-1",
	"# staff holds a class grant but is not a professor",
	"p, sam, class:english-101, view",
	"p, sam, account:7007, view_account",
}

func TestDecisionsFollowSpecTable(t *testing.T) {
	a, _ := newAuthorizer(t, specPolicy...)
	student := func(id string) facade.Principal { return facade.Principal{ID: id, Role: facade.RoleStudent} }
	prof := func(id string) facade.Principal { return facade.Principal{ID: id, Role: facade.RoleProfessor} }
	anyone := func(id, role string) facade.Principal { return facade.Principal{ID: id, Role: role} }
	cases := []struct {
		name string
		got  bool
		want bool
	}{
		// grades: students
		{"student views own grade", a.CanViewGrade(student("alice"), studentID("alice")), true},
		{"student without any policy line views own grade", a.CanViewGrade(student("nobody"), studentID("nobody")), true},
		{"student views another student's grade", a.CanViewGrade(student("alice"), studentID("dave")), false},
		{"student writes own grade even with an update line", a.CanWriteGrade(student("alice"), studentID("alice")), false},
		{"student writes another grade", a.CanWriteGrade(student("alice"), studentID("dave")), false},
		// grades: professors
		{"professor views enrolled student", a.CanViewGrade(prof("bob"), studentID("alice")), true},
		{"professor writes enrolled student", a.CanWriteGrade(prof("bob"), studentID("alice")), true},
		{"professor with view only views", a.CanViewGrade(prof("erin"), studentID("alice")), true},
		{"professor with view only writes", a.CanWriteGrade(prof("erin"), studentID("alice")), false},
		{"professor views student of a class he does not teach", a.CanViewGrade(prof("bob"), studentID("dave")), false},
		{"professor writes student of a class he does not teach", a.CanWriteGrade(prof("bob"), studentID("dave")), false},
		{"professor views student not enrolled anywhere", a.CanViewGrade(prof("bob"), studentID("ghost")), false},
		{"professor through a two-level team writes", a.CanWriteGrade(prof("ivan"), studentID("zoe")), true},
		{"update through a team does not give view", a.CanViewGrade(prof("ivan"), studentID("zoe")), false},
		{"professor views own grade as a student would", a.CanViewGrade(prof("bob"), studentID("bob")), false},
		// grades: other roles, no role, no sub, malformed ids
		{"staff with a class grant views", a.CanViewGrade(anyone("sam", "staff"), studentID("alice")), false},
		{"bob without a role views", a.CanViewGrade(anyone("bob", ""), studentID("alice")), false},
		{"bob without a role writes", a.CanWriteGrade(anyone("bob", ""), studentID("alice")), false},
		{"role is case sensitive", a.CanViewGrade(anyone("bob", "Professor"), studentID("alice")), false},
		{"developer views own-named grade", a.CanViewGrade(anyone("alice", "developer"), studentID("alice")), false},
		{"empty sub as student", a.CanViewGrade(student(""), studentID("")), false},
		{"empty sub as professor", a.CanViewGrade(prof(""), studentID("alice")), false},
		{"malformed student id", a.CanViewGrade(student("a/b"), studentID("a/b")), false},
		// accounts
		{"view_account granted", a.CanViewAccount(anyone("alice", ""), accountID("1001")), true},
		{"view_account for any role", a.CanViewAccount(student("alice"), accountID("1001")), true},
		{"view_account for another role", a.CanViewAccount(anyone("alice", "developer"), accountID("1001")), true},
		{"transfer grant is not view_account", a.CanViewAccount(anyone("alice", ""), accountID("2002")), false},
		{"view_account through two-level team", a.CanViewAccount(anyone("ivan", "staff"), accountID("5005")), true},
		{"view_account for staff with own line", a.CanViewAccount(anyone("sam", "staff"), accountID("7007")), true},
		{"other principal", a.CanViewAccount(anyone("carol", ""), accountID("1001")), false},
		{"empty sub", a.CanViewAccount(anyone("", ""), accountID("1001")), false},
		{"sub that names a group is not the group", a.CanViewAccount(anyone("team:outer", ""), accountID("5005")), false},
		{"sub that names a permission node", a.CanViewAccount(anyone("account:1001 view_account", ""), accountID("1001")), false},
		{"malformed account id", a.CanViewAccount(anyone("alice", ""), accountID("1001 x")), false},
		{"transfer with both grants", a.CanTransfer(anyone("alice", ""), accountID("1001"), accountID("2002")), true},
		{"transfer the other way", a.CanTransfer(anyone("alice", ""), accountID("2002"), accountID("1001")), true},
		{"transfer without grant on the target", a.CanTransfer(anyone("alice", ""), accountID("1001"), accountID("5005")), false},
		{"transfer without grant on the source", a.CanTransfer(anyone("alice", ""), accountID("5005"), accountID("1001")), false},
		{"transfer by view_account holder", a.CanTransfer(anyone("ivan", ""), accountID("5005"), accountID("1001")), false},
		{"transfer malformed", a.CanTransfer(anyone("alice", ""), accountID("1001"), accountID("")), false},
		// builds
		{"project through team", a.CanViewProject(anyone("carol", "developer"), projectKey("PROJ")), true},
		{"plan of a project granted through team", a.CanViewPlan(anyone("carol", ""), planKey("PROJ", "ANY")), true},
		{"plan grant", a.CanViewPlan(anyone("carol", ""), planKey("WEB", "NIGHTLY")), true},
		{"plan grant is not the project", a.CanViewProject(anyone("carol", ""), projectKey("WEB")), false},
		{"plan grant is not a sibling plan", a.CanViewPlan(anyone("carol", ""), planKey("WEB", "RELEASE")), false},
		{"project through two-level team", a.CanViewProject(anyone("ivan", ""), projectKey("DEEP")), true},
		{"plan through two-level team", a.CanViewPlan(anyone("ivan", ""), planKey("DEEP", "X1")), true},
		{"project for a stranger", a.CanViewProject(anyone("mallory", ""), projectKey("PROJ")), false},
		{"plan for a stranger", a.CanViewPlan(anyone("mallory", ""), planKey("WEB", "NIGHTLY")), false},
		{"project for empty sub", a.CanViewProject(anyone("", ""), projectKey("PROJ")), false},
		{"malformed project key", a.CanViewProject(anyone("carol", ""), projectKey("proj")), false},
		{"malformed plan key", a.CanViewPlan(anyone("carol", ""), planKey("WEB", "nightly")), false},
		{"plan key with a dash", a.CanViewPlan(anyone("carol", ""), planKey("WEB", "NIGHTLY-X")), false},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
		}
	}
}

func TestDecisionsAreCounted(t *testing.T) {
	a, _ := newAuthorizer(t, specPolicy...)
	allow := a.metrics.Decisions.WithLabelValues("transfer", "allow")
	deny := a.metrics.Decisions.WithLabelValues("transfer", "deny")
	allowBefore, denyBefore := policytest.CounterValue(allow), policytest.CounterValue(deny)
	a.CanTransfer(facade.Principal{ID: "alice"}, accountID("1001"), accountID("2002"))
	a.CanTransfer(facade.Principal{ID: "mallory"}, accountID("1001"), accountID("2002"))
	a.CanTransfer(facade.Principal{ID: "mallory"}, accountID("2002"), accountID("1001"))
	if got := policytest.CounterValue(allow) - allowBefore; got != 1 {
		t.Errorf("allow counter moved by %v, want 1", got)
	}
	if got := policytest.CounterValue(deny) - denyBefore; got != 2 {
		t.Errorf("deny counter moved by %v, want 2", got)
	}
}

func TestZeroAuthorizerDeniesEverything(t *testing.T) {
	var a Authorizer
	p := facade.Principal{ID: "alice", Role: facade.RoleStudent}
	if a.CanViewAccount(p, accountID("1001")) || a.CanViewGrade(p, studentID("dave")) || a.CanViewPlan(p, planKey("A", "B")) {
		t.Fatal("zero Authorizer allowed something")
	}
	if a.Status().Loaded {
		t.Fatal("zero Authorizer reports a loaded policy")
	}
}

// Decisions run while reloads swap policies; -race checks the sharing.
func TestConcurrentDecisionsDuringReloads(t *testing.T) {
	a, policyPath := newAuthorizer(t, specPolicy...)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if !a.CanViewGrade(facade.Principal{ID: "bob", Role: facade.RoleProfessor}, studentID("alice")) {
					t.Error("bob lost a grant that every policy version has")
					return
				}
				a.CanViewAccount(facade.Principal{ID: "alice"}, accountID("1001"))
			}
		}()
	}
	for i := range 20 {
		policytest.ReplaceFile(t, policyPath, fmt.Sprintf("%s\np, alice, account:%d, view_account\n", joinLines(specPolicy), 9000+i))
		if err := a.Reload(); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	if v := a.Version(); v != 21 {
		t.Errorf("version after 20 changed reloads = %d, want 21", v)
	}
}

func joinLines(lines []string) string {
	out := ""
	for _, l := range lines {
		out += l + "\n"
	}
	return out
}

func facadePrincipal(id, role string) facade.Principal { return facade.Principal{ID: id, Role: role} }
