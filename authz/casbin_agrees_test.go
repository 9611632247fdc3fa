package authz

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/casbin/casbin/v2"
	"github.com/casbin/casbin/v2/model"
	stringadapter "github.com/casbin/casbin/v2/persist/string-adapter"
)

// Every test here compares the service with stock casbin v2 loading the
// same files from disk (casbin.NewEnforcer(model, policy)), which is what
// casbin's editor, casbin-server and ops' scripts do.

// families are model.conf variants ops may write; each must be decided by
// the index (recognized) with casbin's answers.
var families = map[string]string{
	"shipped": "", // the repository's model.conf
	"rbac-plain": `[request_definition]
r = sub, obj, act
[policy_definition]
p = sub, obj, act
[role_definition]
g = _, _
[policy_effect]
e = some(where (p.eft == allow))
[matchers]
m = g(r.sub, p.sub) && r.obj == p.obj && r.act == p.act`,
	"resource-groups-g2": `[request_definition]
r = sub, obj, act
[policy_definition]
p = sub, obj, act
[role_definition]
g = _, _
g2 = _, _
[policy_effect]
e = some(where (p.eft == allow))
[matchers]
m = g(r.sub, p.sub) && g2(r.obj, p.obj) && r.act == p.act`,
	"deny-keymatch": `[request_definition]
r = sub, obj, act
[policy_definition]
p = sub, obj, act, eft
[role_definition]
g = _, _
[policy_effect]
e = some(where (p.eft == allow)) && !some(where (p.eft == deny))
[matchers]
m = !regexMatch(r.sub, ":") && g(r.sub, p.sub) && (g(r.obj, p.obj) || keyMatch(r.obj, p.obj)) && r.act == p.act`,
	"deny-keymatch2": `[request_definition]
r = sub, obj, act
[policy_definition]
p = sub, obj, act, eft
[role_definition]
g = _, _
g2 = _, _
[policy_effect]
e = some(where (p.eft == allow)) && !some(where (p.eft == deny))
[matchers]
m = r.act == p.act && (keyMatch2(r.obj, p.obj) || g2(r.obj, p.obj)) && g(r.sub, p.sub)`,
	"globmatch-allow-only-eft": `[request_definition]
r = sub, obj, act
[policy_definition]
p = sub, obj, act, eft
[role_definition]
g = _, _
[policy_effect]
e = some(where (p.eft == allow))
[matchers]
m = g(r.sub, p.sub) && globMatch(r.obj, p.obj) && r.act == p.act`,
}

func familyModel(t testing.TB, name string) string {
	if name == "shipped" {
		return shippedModel(t)
	}
	return families[name]
}

// randomPolicy writes g lines (nested groups, cycles, chains past casbin's
// 10 links, students in classes, plans in projects) and p lines (literal,
// wildcard, deny) over a small vocabulary so questions often hit.
func randomPolicy(rng *rand.Rand, eft bool, g2 bool) []string {
	principals := []string{"ann", "ben", "cat", "dan"}
	groups := []string{"team:a", "team:b", "team:c", "team:d", "team:e", "group:x", "group:devs", "group:ops", "group:acme:payments", "group:Domain Users", "group:team-a/admins"}
	objects := []string{"account:1", "account:2", "project:P", "project:Q", "plan:P-X", "plan:P-Y", "class:c1", "class:c2", "student:s1", "student:s2"}
	patterns := []string{"account:*", "plan:P-*", "project:*", "plan:*", "*", "student:s*", "plan:P-X*", "class:c?", "plan:P-[XY]"}
	acts := []string{"view", "update", "view_account", "transfer"}
	objG := "g"
	if g2 {
		objG = "g2"
	}
	var lines []string
	for range rng.IntN(30) {
		lines = append(lines, fmt.Sprintf("g, %s, %s", pick(rng, append(principals, groups...)), pick(rng, groups)))
	}
	if rng.IntN(3) == 0 { // a chain of 12 links: casbin stops following after 10
		for i := range 12 {
			lines = append(lines, fmt.Sprintf("g, chain:%d, chain:%d", i, i+1))
		}
		// group:devs is 10 links from chain:12, so a token carrying devs is
		// 11 away: one past what casbin follows.
		lines = append(lines, "g, ann, chain:0", "g, group:devs, chain:3", "p, chain:12, account:1, view_account")
		if eft {
			lines[len(lines)-1] += ", allow"
		}
	}
	if rng.IntN(4) == 0 { // a principal that is itself a group, of a name or an object
		lines = append(lines, fmt.Sprintf("g, %s, %s", pick(rng, []string{"ben", "team:a", "plan:P-X", "account:1"}), pick(rng, principals)))
	}
	for range rng.IntN(12) {
		from := pick(rng, []string{"student:s1", "student:s2", "plan:P-X", "plan:P-Y", "class:c1"})
		lines = append(lines, fmt.Sprintf("%s, %s, %s", objG, from, pick(rng, []string{"class:c1", "class:c2", "project:P", "project:Q", "class:all"})))
	}
	for range 1 + rng.IntN(25) {
		obj := pick(rng, objects)
		if rng.IntN(3) == 0 {
			obj = pick(rng, patterns)
		}
		line := fmt.Sprintf("p, %s, %s, %s", pick(rng, append(principals, groups...)), obj, pick(rng, acts))
		if eft {
			line += ", " + pick(rng, []string{"allow", "allow", "deny", "maybe"})
		}
		lines = append(lines, line)
	}
	return lines
}

// agree loads model text and lines into the Authorizer's decider and into
// stock casbin, and compares n random questions plus every question the
// policy's own names make.
func agree(t *testing.T, modelText string, lines []string, rng *rand.Rand, wantDecider string, sample int) {
	t.Helper()
	dir := t.TempDir()
	modelPath, policyPath := filepath.Join(dir, "model.conf"), filepath.Join(dir, "policy.csv")
	writeFile(t, modelPath, modelText)
	writeFile(t, policyPath, strings.Join(lines, "\n")+"\n")
	f, err := readFiles(modelPath, policyPath)
	if err != nil {
		t.Fatal(err)
	}
	st, problems := compile(f)
	if st == nil {
		t.Fatalf("refused: %v\n%s", problems, strings.Join(lines, "\n"))
	}
	if st.decider.kind() != wantDecider {
		t.Fatalf("decider %s (%s), want %s", st.decider.kind(), st.family, wantDecider)
	}
	stock, err := casbin.NewEnforcer(modelPath, policyPath)
	if err != nil {
		t.Fatal(err)
	}
	askBoth(t, st, stock, questions(rng, sample), modelText, strings.Join(lines, "\n"))
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
func askBoth(t *testing.T, st *state, stock *casbin.Enforcer, qs []question, modelText, policyText string) {
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
		if got := st.enforce(subjectWith(q.sub, q.groups), q.obj, q.act); got != want {
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
			qs[i] = question{pick(rng, subs), groupSets[rng.IntN(len(groupSets))], pick(rng, objs), pick(rng, acts)}
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
	for name := range families {
		t.Run(name, func(t *testing.T) {
			modelText := familyModel(t, name)
			rng := rand.New(rand.NewPCG(uint64(len(name)), 9))
			for range 30 {
				lines := randomPolicy(rng, strings.Contains(modelText, "eft\n"), strings.Contains(modelText, "g2("))
				agree(t, modelText, lines, rng, deciderIndex, 0)
			}
		})
	}
}

// TestShippedFilesAnswerTheReadmeQuestionsAsStockCasbin: docs/policy.md's own
// examples on the repository's files, asked of stock casbin and of the
// service's Authorizer through the question each route asks.
func TestShippedFilesAnswerTheReadmeQuestionsAsStockCasbin(t *testing.T) {
	stock, err := casbin.NewEnforcer("../model.conf", "../policy.csv")
	if err != nil {
		t.Fatal(err)
	}
	a, err := New("../model.conf", "../policy.csv", Config{Log: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	if st := a.Status(); st.Decider != deciderIndex {
		t.Fatalf("shipped model decided by %q, want the index", st.Decider)
	}
	cases := []struct {
		sub, obj, act string
		want          bool
		service       func() bool
	}{
		{"alice", "account:1001", "view_account", true, func() bool { return a.CanViewAccount(alice, accountID("1001")) }},
		{"alice", "account:2002", "view_account", false, func() bool { return a.CanViewAccount(alice, accountID("2002")) }},
		{"carol", "plan:WEB-NIGHTLY", "view", true, func() bool { return a.CanViewPlan(carol, planKey("WEB", "NIGHTLY")) }},
		{"carol", "project:PROJ", "view", true, func() bool { return a.CanViewProject(carol, projectKey("PROJ")) }},
		{"bob", "class:english-101", "update", true, func() bool {
			return a.CanViewClass(facadePrincipal("bob", "professor"), classID("english-101"))
		}},
		{"bob", "student:alice", "update", true, func() bool { return a.CanWriteGrade(facadePrincipal("bob", "professor"), studentID("alice")) }},
		{"bob", "student:dave", "view", false, func() bool { return a.CanViewGrade(facadePrincipal("bob", "professor"), studentID("dave")) }},
		{"dev", "project:PROJ", "view", true, func() bool { return a.CanViewProject(facadePrincipal("dev", "developer"), projectKey("PROJ")) }},
		{"wendy", "plan:WEB-ANYTHING", "view", true, func() bool { return a.CanViewPlan(facadePrincipal("wendy", ""), planKey("WEB", "ANYTHING")) }},
		{"team:platform", "project:PROJ", "view", false, func() bool {
			return a.CanViewProject(facadePrincipal("team:platform", "developer"), projectKey("PROJ"))
		}},
	}
	for _, c := range cases {
		got, err := stock.Enforce(c.sub, c.obj, c.act)
		if err != nil || got != c.want {
			t.Errorf("stock casbin Enforce(%s, %s, %s) = %v, %v; want %v", c.sub, c.obj, c.act, got, err, c.want)
		}
		if c.service() != c.want {
			t.Errorf("service on (%s, %s, %s) = %v, want %v", c.sub, c.obj, c.act, !c.want, c.want)
		}
	}
}

// FuzzIndexAgreesWithStockCasbin: small policies built from fuzzed seeds,
// on every recognized family, 16 random questions each. An execution stays
// in memory (stock casbin parses the same texts through its string
// adapter and LoadPolicyLine, as its file adapter does per line) and costs
// well under a millisecond, so a 10 s CI pass tries thousands of policies.
func FuzzIndexAgreesWithStockCasbin(f *testing.F) {
	names := slices.Sorted(maps.Keys(families))
	models := map[string]string{}
	for _, name := range names {
		models[name] = familyModel(f, name)
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

// smallPolicy is randomPolicy cut to at most 12 lines: a fuzz execution
// should be cheap, and disagreements show on small policies.
func smallPolicy(rng *rand.Rand, eft, g2 bool) []string {
	lines := randomPolicy(rng, eft, g2)
	rng.Shuffle(len(lines), func(i, j int) { lines[i], lines[j] = lines[j], lines[i] })
	return lines[:min(len(lines), 1+rng.IntN(12))]
}

// agreeInMemory is agree without the disk: the service compiles the texts
// as it compiles files, stock casbin loads them with its string adapter.
func agreeInMemory(t *testing.T, modelText string, lines []string, rng *rand.Rand, sample int) {
	t.Helper()
	policyText := strings.Join(lines, "\n") + "\n"
	st, problems := compile(files{modelPath: "model.conf", policyPath: "policy.csv", model: []byte(modelText), policy: []byte(policyText)})
	if st == nil || st.decider.kind() != deciderIndex {
		t.Fatalf("refused or not indexed: %v\n%s", problems, policyText)
	}
	askBoth(t, st, stockInMemory(t, modelText, policyText), questions(rng, sample), modelText, policyText)
}

func pick[T any](rng *rand.Rand, xs []T) T { return xs[rng.IntN(len(xs))] }
