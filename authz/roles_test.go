package authz

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/casbin/casbin/v2"

	facade "github.com/facade-dev/facade"
	"github.com/facade-dev/facade/authz/internal/policytest"
)

// TestRolesFromThePolicyReachGrades: a provider without a role claim
// (Dex) sends only groups; "g, group:english-graders, role:professor"
// makes the graders professors as if their tokens said so, and the class
// grant then decides, as it would for a token's professor. Without the
// role line the class grant alone reaches no grade.
func TestRolesFromThePolicyReachGrades(t *testing.T) {
	base := []string{
		"p, group:english-graders, class:english-101, view",
		"g, student:henry, class:english-101",
		"g, student:dave, class:math-201",
		"p, frank, class:math-201, update",
		"p, frank, class:math-201, view",
	}
	grace := facade.Principal{ID: "grace", Groups: []string{"english-graders"}}
	without, _ := newAuthorizer(t, base...)
	if without.CanViewGrade(grace, studentID("henry")) || without.CanViewClass(grace, classID("english-101")) {
		t.Fatal("a class grant without a role reaches a grade")
	}
	a, _ := newAuthorizer(t, append(base,
		"g, group:english-graders, role:professor",
		"g, frank, team:math", "g, team:math, role:professor",
		"g, student:henry, role:student",
		"p, student:henry, class:english-101, update", // a student never writes, whatever the policy says
		"g, team:x, role:professor", "p, team:x, class:english-101, view",
	)...)
	for _, c := range []struct {
		p                facade.Principal
		student          string
		wantView, wantUp bool
	}{
		{grace, "henry", true, false},
		{grace, "dave", false, false},
		{facade.Principal{ID: "grace"}, "henry", false, false}, // the group is what makes her a grader
		{facade.Principal{ID: "frank"}, "dave", true, true},    // through a team
		{facade.Principal{ID: "frank"}, "henry", false, false},
		{facade.Principal{ID: "henry"}, "henry", false, false}, // student:henry has the role, not henry
		{facade.Principal{ID: "team:x"}, "henry", false, false},
		{facade.Principal{ID: "team:x", Role: "professor"}, "henry", false, false},
		{facade.Principal{ID: "grace", Role: "student", Groups: []string{"english-graders"}}, "henry", true, false},
		{facade.Principal{ID: "grace", Role: "student", Groups: []string{"english-graders"}}, "grace", true, false},
	} {
		if got := a.CanViewGrade(c.p, studentID(c.student)); got != c.wantView {
			t.Errorf("%+v views %s: %v, want %v", c.p, c.student, got, c.wantView)
		}
		if got := a.CanWriteGrade(c.p, studentID(c.student)); got != c.wantUp {
			t.Errorf("%+v writes %s: %v, want %v", c.p, c.student, got, c.wantUp)
		}
	}
	if got := a.Enrollment().ClassesVisibleTo(grace); len(got) != 1 || got[0] != "english-101" {
		t.Errorf("grace's classes: %v", got)
	}
	if got := a.Roles(grace); len(got) != 1 || got[0] != "professor" {
		t.Errorf("grace's roles: %v", got)
	}
	// A token whose sub is shaped like a group is not that group: no role.
	if got := a.Roles(facade.Principal{ID: "team:x"}); len(got) != 0 {
		t.Errorf("a token with sub team:x has team:x's roles: %v", got)
	}
	s, _ := newAuthorizer(t, append(base, "g, henry, role:student", "p, henry, student:henry, update")...)
	henry := facade.Principal{ID: "henry"}
	if !s.CanViewGrade(henry, studentID("henry")) || s.CanViewGrade(henry, studentID("dave")) || s.CanWriteGrade(henry, studentID("henry")) {
		t.Error("role:student from the policy: views only their own grade and never writes")
	}
}

// TestPolicyRolesAreCasbinsLinks: over random g graphs (nested groups,
// cycles, chains longer than casbin follows), a principal has role R from
// the policy exactly when stock casbin, given the same files with the
// token's "g, <sub>, group:<name>" lines added, says HasLink(sub, role:R).
func TestPolicyRolesAreCasbinsLinks(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 3))
	names := []string{"ann", "ben", "team:a", "team:b", "team:c", "group:g1", "group:Domain Users", "group:acme:pay", "role:professor", "role:student"}
	asked := 0
	for round := range 40 {
		var lines []string
		for range 4 + rng.IntN(20) {
			lines = append(lines, fmt.Sprintf("g, %s, %s", policytest.Pick(rng, names[:8]), policytest.Pick(rng, names)))
		}
		if round%4 == 0 {
			// c:0 is 10 links from role:professor: ann, one more, is past
			// casbin's 10, and so is a token carrying g1 (one link to
			// group:g1, then 10); acme:pay's token is exactly 10 away.
			for i := range 9 {
				lines = append(lines, fmt.Sprintf("g, c:%d, c:%d", i, i+1))
			}
			lines = append(lines, "g, c:9, role:professor", "g, ann, c:0", "g, group:g1, c:0", "g, group:acme:pay, c:1")
		}
		lines = append(lines, "p, nobody, account:1, view_account")
		a, policyPath := newAuthorizer(t, lines...)
		st := a.force.state()
		for _, sub := range []string{"ann", "ben", "cat"} {
			for _, groups := range [][]string{nil, {"g1"}, {"Domain Users", "acme:pay"}, {"acme"}} {
				p := facade.Principal{ID: sub, Groups: groups}
				stock, err := casbin.NewEnforcer(filepath.Join(filepath.Dir(policyPath), "model.conf"), withLines(t, policyPath, p))
				if err != nil {
					t.Fatal(err)
				}
				for _, role := range []string{"professor", "student"} {
					want, _ := stock.GetRoleManager().HasLink(sub, PrefixRole+role)
					if got := st.HasRole(p, role); got != want {
						t.Fatalf("%+v role %s: service %v, casbin HasLink %v\n%s", p, role, got, want, strings.Join(lines, "\n"))
					}
					asked++
				}
			}
		}
	}
	t.Logf("%d role questions", asked)
}

// BenchmarkGradeWithPolicyRoles: a grade read by a principal whose
// professor role comes from the policy through one of the 200 groups its
// token carries (Entra's object ids), on a policy of 20,000 enrollments
// and 200 role lines; and the same principal denied (its groups give no
// role), the cost of looking.
func BenchmarkGradeWithPolicyRoles(b *testing.B) {
	var lines []string
	groups := make([]string, 200)
	for i := range groups {
		groups[i] = fmt.Sprintf("%08x-0f3d-4e6a-9b7c-2d1f0e9a8b7c", i)
		lines = append(lines, fmt.Sprintf("g, group:%s, role:professor", groups[i]))
		lines = append(lines, fmt.Sprintf("p, group:%s, class:c%d, view", groups[i], i))
	}
	for i := range 20_000 {
		lines = append(lines, fmt.Sprintf("g, student:s%d, class:c%d", i, i%200))
	}
	a, _ := newAuthorizer(b, lines...)
	grader := facade.Principal{ID: "grader", Groups: groups}
	nobody := facade.Principal{ID: "nobody", Groups: []string{"x", "y"}}
	b.Run("allow-200-groups", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if !a.CanViewGrade(grader, studentID("s"+strconv.Itoa(i%20_000))) {
				b.Fatal("deny")
			}
		}
	})
	tokenProfessor := facade.Principal{ID: "grader", Role: facade.RoleProfessor, Groups: groups}
	b.Run("allow-200-groups-token-role", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if !a.CanViewGrade(tokenProfessor, studentID("s"+strconv.Itoa(i%20_000))) {
				b.Fatal("deny")
			}
		}
	})
	b.Run("deny-no-role", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if a.CanViewGrade(nobody, studentID("s"+strconv.Itoa(i%20_000))) {
				b.Fatal("allow")
			}
		}
	})
	// The most groups a token may bring (auth's bound), none granting
	// anything: every one of them is looked at.
	many := make([]string, 2048)
	for i := range many {
		many[i] = fmt.Sprintf("%08x-aaaa-4e6a-9b7c-2d1f0e9a8b7c", i)
	}
	outsider := facade.Principal{ID: "outsider", Groups: many}
	b.Run("deny-2048-groups", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if a.CanViewGrade(outsider, studentID("s"+strconv.Itoa(i%20_000))) {
				b.Fatal("allow")
			}
		}
	})
}
