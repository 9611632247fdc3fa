package policytool

import (
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	facade "github.com/facade-dev/facade"
	"github.com/facade-dev/facade/authz/internal/policytest"
)

// TestReportListsExactlyWhatThePolicyGrants: on random policies of every
// family, the report's rows for principals and literal objects are
// exactly the questions over the policy's names that the decider allows
// (as What finds them one by one), and a group's rows are what its members
// get; every row cites a line that grants it.
func TestReportListsExactlyWhatThePolicyGrants(t *testing.T) {
	for name := range policytest.Families {
		t.Run(name, func(t *testing.T) {
			modelText := policytest.FamilyModel(t, name)
			rng := rand.New(rand.NewPCG(uint64(len(name)), 21))
			for range 10 {
				lines := policytest.RandomPolicy(rng, strings.Contains(modelText, "eft\n"), strings.Contains(modelText, "g2("))
				dir := t.TempDir()
				policytest.WriteFile(t, filepath.Join(dir, "model.conf"), modelText)
				policytest.WriteFile(t, filepath.Join(dir, "policy.csv"), strings.Join(lines, "\n")+"\n")
				p, err := Open(filepath.Join(dir, "model.conf"), filepath.Join(dir, "policy.csv"))
				if err != nil {
					t.Fatal(err)
				}
				checkReport(t, p, lines)
			}
		})
	}
}

func checkReport(t *testing.T, p *Policy, lines []string) {
	t.Helper()
	grants, err := p.Report("")
	if err != nil {
		t.Fatal(err)
	}
	reported := map[string]bool{}
	for _, g := range grants {
		if len(g.GrantedBy) == 0 {
			t.Fatalf("%+v cites no line", g)
		}
		reported[g.Subject+" "+g.Object+" "+g.Action] = true
		if !isWildcard(p, g.Object) && !p.asGroupOrPrincipal(principalOrGroup(g.Subject), g.Object, g.Action) {
			t.Fatalf("report grants %s %s %s, the decider denies it\n%s", g.Subject, g.Object, g.Action, strings.Join(lines, "\n"))
		}
	}
	subjects, objects, actions := p.names()
	for _, s := range subjects {
		for _, o := range objects {
			for _, a := range actions {
				if p.asGroupOrPrincipal(principalOrGroup(s), o, a) && !reported[s+" "+o+" "+a] && !isWildcard(p, o) {
					if wildcardCovers(p, grants, s, a) {
						continue // granted as the pattern, named as written
					}
					t.Fatalf("the decider allows %s %s %s, the report leaves it out\n%s", s, o, a, strings.Join(lines, "\n"))
				}
			}
		}
	}
}

func principalOrGroup(s string) facade.Principal { return facade.Principal{ID: s} }

// wildcardCovers: a grant of s through a wildcard object for act.
func wildcardCovers(p *Policy, grants []Grant, s, act string) bool {
	return slices.ContainsFunc(grants, func(g Grant) bool {
		return g.Subject == s && g.Action == act && isWildcard(p, g.Object)
	})
}

func isWildcard(p *Policy, obj string) bool { return p.pol.IsWildcard(obj) }

// BenchmarkReport is the access review of the contract-sized policy
// (100,000 enrollments, 10,000 grants): every subject x object x action.
func BenchmarkReport(b *testing.B) {
	f := policytest.Generate(b, b.TempDir(), policytest.SpecScale)
	p, err := Open(f.ModelPath, f.PolicyPath)
	if err != nil {
		b.Fatal(err)
	}
	var rows int
	var took time.Duration
	for b.Loop() {
		started := time.Now()
		grants, err := p.Report("")
		if err != nil {
			b.Fatal(err)
		}
		took += time.Since(started)
		rows = len(grants)
	}
	b.ReportMetric(float64(took.Milliseconds())/float64(b.N), "ms/report")
	b.Logf("%d enrollments, %d grants: %d report rows in %v", f.Enrollments, f.Grants, rows, (took / time.Duration(b.N)).Round(time.Millisecond))
}
