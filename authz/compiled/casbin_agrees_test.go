package compiled

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/casbin/casbin/v2"
	"github.com/casbin/casbin/v2/model"
	stringadapter "github.com/casbin/casbin/v2/persist/string-adapter"
	"github.com/facade-dev/facade/authz/internal/policytest"
)

// Every test here compares the compiled policy with stock casbin v2 loading the
// same files from disk (casbin.NewEnforcer(model, policy)), which is what
// casbin's editor, casbin-server and ops' scripts do.

// agree compiles model text and lines (compileTexts) and loads them into
// stock casbin, and compares n random questions plus every question the
// policy's own names make.
func agree(t *testing.T, modelText string, lines []string, rng *rand.Rand, wantDecider string, sample int) {
	t.Helper()
	modelPath, policyPath := policytest.ModelFiles(t, modelText, lines...)
	pol, problems := compileTexts(modelText, strings.Join(lines, "\n")+"\n")
	if pol == nil {
		t.Fatalf("refused: %v\n%s", problems, strings.Join(lines, "\n"))
	}
	if pol.Decider() != wantDecider {
		t.Fatalf("decider %s (%s), want %s", pol.Decider(), pol.Family, wantDecider)
	}
	stock, err := casbin.NewEnforcer(modelPath, policyPath)
	if err != nil {
		t.Fatal(err)
	}
	askBoth(t, pol, stock, questions(rng, sample), modelText, strings.Join(lines, "\n"))
}

// question is one (sub, obj, act) asked by a principal that may carry
// token groups (names, as a token's groups claim has them).
type question struct {
	sub    string
	groups []string
	obj    string
	act    string
}

// askBoth asks the service and stock casbin every question and fails on
// the first they answer differently, showing the files. A question with
// token groups is asked of stock casbin on the same files with
// "g, <sub>, group:<name>" lines added, a fresh enforcer per subject.
func askBoth(t *testing.T, pol *Policy, stock *casbin.Enforcer, qs []question, modelText, policyText string) {
	t.Helper()
	withGroups := map[string]*casbin.Enforcer{}
	for _, q := range qs {
		e, extra := stock, ""
		if len(q.groups) > 0 && strings.Contains(modelText, "g = _, _") {
			for _, g := range q.groups {
				extra += fmt.Sprintf("g, %s, group:%s\n", q.sub, g)
			}
			if e = withGroups[extra]; e == nil {
				e = stockInMemory(t, modelText, policyText+"\n"+extra)
				withGroups[extra] = e
			}
		}
		want, err := e.Enforce(q.sub, q.obj, q.act)
		want = want && err == nil // casbin's errors are the service's denials
		if got := pol.Enforce(SubjectWith(q.sub, q.groups), q.obj, q.act); got != want {
			t.Fatalf("Enforce(%q, %s, %s) with token groups %v: service %v, stock casbin %v (%v)\nmodel:\n%s\npolicy:\n%s%s",
				q.sub, q.obj, q.act, q.groups, got, want, err, modelText, policyText, extra)
		}
	}
}

// stockInMemory is stock casbin on model and policy texts (its string
// adapter reads lines as its file adapter does).
func stockInMemory(t *testing.T, modelText, policyText string) *casbin.Enforcer {
	t.Helper()
	m, err := model.NewModelFromString(modelText)
	if err != nil {
		t.Fatal(err)
	}
	e, err := casbin.NewEnforcer(m, stringadapter.NewAdapter(policyText))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// questions is every (sub, obj, act) over the test vocabulary, each also
// with token groups, or, with sample > 0, that many of them drawn by rng:
// stock casbin's Enforce is the slow half of a comparison, and a fuzz
// execution should be cheap.
func questions(rng *rand.Rand, sample int) []question {
	subs := []string{"ann", "ben", "cat", "dan", "zed", "team:a", "chain:11", ""}
	objs := []string{"account:1", "account:2", "account:9", "project:P", "project:Q", "plan:P-X", "plan:P-Y", "plan:Q-Z", "class:c1", "class:c2", "class:c3", "student:s1", "student:s2", "student:s9", "team:a", "plan:P-*", "ann", "group:devs"}
	acts := []string{"view", "update", "view_account", "transfer"}
	groupSets := [][]string{nil, {"devs"}, {"ops", "devs"}, {"x"}, {"acme:payments"}, {"Domain Users", "acme"}, {"team-a/admins", "Domain"}}
	if sample > 0 {
		qs := make([]question, sample)
		for i := range qs {
			qs[i] = question{policytest.Pick(rng, subs), groupSets[rng.IntN(len(groupSets))], policytest.Pick(rng, objs), policytest.Pick(rng, acts)}
		}
		return qs
	}
	var all []question
	for _, sub := range subs {
		// Every question without groups; with token groups, those of a few
		// principals (one stock enforcer each, the cost of a comparison).
		groups := [][]string{nil}
		if sub == "ann" || sub == "ben" || sub == "zed" {
			groups = append(groups, groupSets[1+rng.IntN(len(groupSets)-1)])
		}
		for _, gs := range groups {
			for _, obj := range objs {
				for _, act := range acts {
					all = append(all, question{sub, gs, obj, act})
				}
			}
		}
	}
	return all
}

// TestIndexAgreesWithStockCasbinOnRandomPolicies: every recognized family,
// 30 random policies each, every question over the vocabulary.
func TestIndexAgreesWithStockCasbinOnRandomPolicies(t *testing.T) {
	for name := range policytest.Families {
		t.Run(name, func(t *testing.T) {
			modelText := policytest.FamilyModel(t, name)
			rng := rand.New(rand.NewPCG(uint64(len(name)), 9))
			for range 30 {
				lines := policytest.RandomPolicy(rng, strings.Contains(modelText, "eft\n"), strings.Contains(modelText, "g2("))
				agree(t, modelText, lines, rng, DeciderIndex, 0)
			}
		})
	}
}

// FuzzIndexAgreesWithStockCasbin: small policies built from fuzzed seeds,
// on every recognized family, 16 random questions each. An execution stays
// in memory (stock casbin parses the same texts through its string
// adapter and LoadPolicyLine, as its file adapter does per line) and is
// cheap, so a short CI pass tries many policies.
func FuzzIndexAgreesWithStockCasbin(f *testing.F) {
	names := slices.Sorted(maps.Keys(policytest.Families))
	models := map[string]string{}
	for _, name := range names {
		models[name] = policytest.FamilyModel(f, name)
	}
	f.Add(uint64(1), uint64(2), uint8(0))
	f.Add(uint64(7), uint64(99), uint8(3))
	f.Fuzz(func(t *testing.T, a, b uint64, family uint8) {
		rng := rand.New(rand.NewPCG(a, b))
		modelText := models[names[int(family)%len(names)]]
		eft, g2 := strings.Contains(modelText, "eft\n"), strings.Contains(modelText, "g2(")
		agreeInMemory(t, modelText, smallPolicy(rng, eft, g2), rng, 16)
	})
}

// smallPolicy is policytest.RandomPolicy cut to at most 12 lines: a fuzz execution
// should be cheap, and disagreements show on small policies.
func smallPolicy(rng *rand.Rand, eft, g2 bool) []string {
	lines := policytest.RandomPolicy(rng, eft, g2)
	rng.Shuffle(len(lines), func(i, j int) { lines[i], lines[j] = lines[j], lines[i] })
	return lines[:min(len(lines), 1+rng.IntN(12))]
}

// agreeInMemory is agree without the disk: compileTexts compiles the
// texts as the service compiles files, stock casbin loads them with its string adapter.
func agreeInMemory(t *testing.T, modelText string, lines []string, rng *rand.Rand, sample int) {
	t.Helper()
	policyText := strings.Join(lines, "\n") + "\n"
	pol, problems := compileTexts(modelText, policyText)
	if pol == nil || pol.Decider() != DeciderIndex {
		t.Fatalf("refused or not indexed: %v\n%s", problems, policyText)
	}
	askBoth(t, pol, stockInMemory(t, modelText, policyText), questions(rng, sample), modelText, policyText)
}
