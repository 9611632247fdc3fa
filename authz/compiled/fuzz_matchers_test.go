package compiled

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/casbin/casbin/v2/model"
	"github.com/casbin/casbin/v2/util"
	"github.com/facade-dev/facade/authz/internal/policytest"
)

// The differential fuzz of issue 20: generated models (matchers with &&,
// ||, !, parentheses, g and g2, keyMatch, keyMatch2, keyMatch3, globMatch,
// regexMatch, literals; allow and deny effects) and policies, every
// decision compared with stock casbin v2 on the same texts. The service
// takes a model into its own index only when it decides exactly as casbin
// does, and leaves the others to casbin's Enforce; either way its answer
// must be casbin's, token groups included.

// matcherGen writes random matchers. Most are conjunctions of one term per
// column, the family the index decides, in any order and grouping; some
// are mutated out of it (|| at the top, a negation, a condition on the
// request alone), and some are random trees over every atom.
type matcherGen struct {
	rng *rand.Rand
	g2  bool
}

var (
	subAlts = []string{"r.sub == p.sub", "g(r.sub, p.sub)", "p.sub == r.sub", `p.sub == "role:admin"`}
	objAlts = []string{"r.obj == p.obj", "g(r.obj, p.obj)", "keyMatch(r.obj, p.obj)", "keyMatch2(r.obj, p.obj)",
		"keyMatch3(r.obj, p.obj)", "globMatch(r.obj, p.obj)", "regexMatch(r.obj, p.obj)", `p.obj == "*"`}
	actAlts = []string{"r.act == p.act", `p.act == "*"`, `"*" == p.act`}
	extra   = []string{`r.sub == "root"`, `!regexMatch(r.sub, ":")`, `regexMatch(r.act, p.act)`, `!g(r.sub, p.sub)`,
		`r.obj == "account:1"`, `keyMatch(r.sub, p.sub)`, `p.act != "update"`}
)

func (mg matcherGen) alts(pool []string) []string {
	if mg.g2 {
		pool = append(pool, strings.ReplaceAll(pool[1], "g(", "g2("))
	}
	n := 1 + mg.rng.IntN(2)
	if mg.rng.IntN(8) == 0 {
		n = 3
	}
	var out []string
	for range n {
		out = append(out, policytest.Pick(mg.rng, pool))
	}
	return out
}

// term joins alternatives with ||, parenthesized as && needs (or not,
// sometimes, which changes the meaning: casbin's precedence decides).
func (mg matcherGen) term(alts []string) string {
	t := strings.Join(alts, " || ")
	if len(alts) > 1 && mg.rng.IntN(6) != 0 || mg.rng.IntN(5) == 0 {
		t = "(" + t + ")"
	}
	return t
}

func (mg matcherGen) matcher() string {
	if mg.rng.IntN(6) == 0 {
		return mg.tree(3)
	}
	terms := []string{mg.term(mg.alts(subAlts)), mg.term(mg.alts(objAlts)), mg.term(mg.alts(actAlts))}
	if mg.rng.IntN(3) == 0 {
		terms = append(terms, `!regexMatch(r.sub, ":")`)
	}
	mg.rng.Shuffle(len(terms), func(i, j int) { terms[i], terms[j] = terms[j], terms[i] })
	ops := make([]string, len(terms)-1)
	for i := range ops {
		ops[i] = "&&"
	}
	switch mg.rng.IntN(10) {
	case 0: // an || among the &&: casbin's precedence, not the text's order
		ops[mg.rng.IntN(len(ops))] = "||"
	case 1:
		terms[mg.rng.IntN(len(terms))] = "!" + "(" + terms[mg.rng.IntN(len(terms))] + ")"
	case 2:
		terms = append(terms, policytest.Pick(mg.rng, extra))
		ops = append(ops, policytest.Pick(mg.rng, []string{"&&", "||"}))
	}
	out := terms[0]
	for i, op := range ops {
		if mg.rng.IntN(5) == 0 { // group what came so far
			out = "(" + out + ")"
		}
		out += " " + op + " " + terms[i+1]
	}
	return out
}

// tree is a random expression over every atom.
func (mg matcherGen) tree(depth int) string {
	if depth == 0 || mg.rng.IntN(3) == 0 {
		return policytest.Pick(mg.rng, [][]string{subAlts, objAlts, actAlts, extra}[mg.rng.IntN(4)])
	}
	switch mg.rng.IntN(4) {
	case 0:
		return "!(" + mg.tree(depth-1) + ")"
	case 1:
		return "(" + mg.tree(depth-1) + " || " + mg.tree(depth-1) + ")"
	}
	return mg.tree(depth-1) + " && " + mg.tree(depth-1)
}

// genModel writes a model around a matcher: r and p as the index wants
// them, g (and g2 when the matcher names it), and an effect.
func genModel(rng *rand.Rand, matcher string) (text string, eft bool) {
	eft = rng.IntN(2) == 0
	effect := "some(where (p.eft == allow))"
	switch rng.IntN(8) {
	case 0, 1, 2:
		effect, eft = "some(where (p.eft == allow)) && !some(where (p.eft == deny))", true
	case 3:
		effect, eft = "!some(where (p.eft == deny))", true
	}
	p := "sub, obj, act"
	if eft {
		p += ", eft"
	}
	roles := "g = _, _\n"
	if strings.Contains(matcher, "g2(") {
		roles += "g2 = _, _\n"
	}
	return fmt.Sprintf("[request_definition]\nr = sub, obj, act\n[policy_definition]\np = %s\n[role_definition]\n%s[policy_effect]\ne = %s\n[matchers]\nm = %s\n",
		p, roles, effect, matcher), eft
}

// Policy vocabulary: objects with slashes and segments for keyMatch2/3,
// patterns with regular-expression characters for every function.
var (
	fuzzSubs     = []string{"ann", "ben", "team:a", "team:b", "group:devs", "role:admin", "root"}
	fuzzObjs     = []string{"account:1", "account:2", "project:P", "project:P/1", "project:P/2/x", "plan:P-X", "class:c1", "student:s1"}
	fuzzPatterns = []string{"*", "account:*", "project:P/*", "project:P/:id", "project:P/{id}", "project:P/{id}/x",
		"account:(1|2)", "account:[0-9]+", "project:.*", "^account", "account:1|project:P", "plan:P-?", "project:P/**",
		"account:{1,2}", "class:c[0-9]", "(?i)ACCOUNT:1", "project:P/.*/x", `account:\d`, "student:s1$", ".*:1",
		"accounts?:1", "project:P/1|plan:P-X", "(plan|project):P", "project:P/x*", "plan:P-X{0}",
		"project:P/**/x", "project:P/*/x", "project:P/{1,2}", "class:c\\1", "project:P/[!1]"}
	fuzzActs = []string{"view", "update", "view_account", "transfer", "*"}
)

// genPolicy writes up to 14 lines over the vocabulary; "*" as an action
// only where the matcher names it (elsewhere the service refuses it as a
// typo).
func genPolicy(rng *rand.Rand, eft, g2, star bool) string {
	acts := fuzzActs
	if !star {
		acts = acts[:len(acts)-1]
	}
	var lines []string
	for range rng.IntN(6) {
		lines = append(lines, fmt.Sprintf("g, %s, %s", policytest.Pick(rng, []string{"ann", "ben", "zed", "team:a", "group:devs"}), policytest.Pick(rng, []string{"team:a", "team:b", "role:admin", "ann"})))
	}
	for range rng.IntN(3) {
		g := "g"
		if g2 && rng.IntN(2) == 0 {
			g = "g2"
		}
		lines = append(lines, fmt.Sprintf("%s, %s, %s", g, policytest.Pick(rng, fuzzObjs), policytest.Pick(rng, []string{"project:P", "class:c1", "account:*"})))
	}
	for range 1 + rng.IntN(8) {
		obj := policytest.Pick(rng, fuzzObjs)
		if rng.IntN(2) == 0 {
			obj = policytest.Pick(rng, fuzzPatterns)
		}
		if strings.Contains(obj, ",") {
			obj = `"` + obj + `"`
		}
		line := fmt.Sprintf("p, %s, %s, %s", policytest.Pick(rng, fuzzSubs), obj, policytest.Pick(rng, acts))
		if eft {
			line += ", " + policytest.Pick(rng, []string{"allow", "allow", "deny", "maybe"})
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n") + "\n"
}

// fuzzQuestions draws n questions, at most two subjects with token groups;
// half take their subject and action from a p line of the policy, so
// that its object decides.
func fuzzQuestions(rng *rand.Rand, n int, policyText string) []question {
	var rows [][]string
	for _, l := range strings.Split(policyText, "\n") {
		if f := strings.Split(l, ", "); len(f) >= 4 && f[0] == "p" {
			rows = append(rows, f[1:])
		}
	}
	subs := []string{"ann", "ben", "zed", "root", "team:a", "role:admin", ""}
	objs := append(append([]string{}, fuzzObjs...), "project:P/3", "account:12", "ACCOUNT:1", "plan:P-XY", "project:P/2/y", "*")
	acts := []string{"view", "update", "transfer", "*"}
	withGroups := map[string][]string{policytest.Pick(rng, subs): {"devs"}, policytest.Pick(rng, subs): {"ops", "devs"}}
	qs := make([]question, n)
	for i := range qs {
		sub, act := policytest.Pick(rng, subs), policytest.Pick(rng, acts)
		if len(rows) > 0 && rng.IntN(2) == 0 {
			row := policytest.Pick(rng, rows)
			sub, act = row[0], row[2]
		}
		qs[i] = question{sub: sub, obj: policytest.Pick(rng, objs), act: act}
		if rng.IntN(2) == 0 {
			qs[i].groups = withGroups[sub]
		}
	}
	return qs
}

// fuzzCase generates one model and policy from rng, or takes matcher as
// given (a mutated string); it returns what compileTexts made of them.
func fuzzCase(rng *rand.Rand, matcher string) (modelText, policyText string, pol *Policy) {
	g2 := rng.IntN(2) == 0
	if matcher == "" {
		matcher = matcherGen{rng: rng, g2: g2}.matcher()
	}
	modelText, eft := genModel(rng, matcher)
	policyText = genPolicy(rng, eft, strings.Contains(matcher, "g2("), strings.Contains(matcher, `"*"`) || strings.Contains(matcher, "r.act, p.act)"))
	pol, _ = compileTexts(modelText, policyText)
	return modelText, policyText, pol
}

// FuzzDecisionsAgreeWithStockCasbin: a generated (or, from the corpus, a
// given and mutated) matcher, a policy, 12 questions. Files compileTexts
// refuses (a pattern casbin fails on, a model casbin cannot read) are not
// compared.
func FuzzDecisionsAgreeWithStockCasbin(f *testing.F) {
	for _, m := range []string{
		"", // generated
		"g(r.sub, p.sub) && keyMatch(r.obj, p.obj) || g2(r.obj, p.obj) && r.act == p.act", // issue 20's mixed precedence
		`!regexMatch(r.sub, ":") && g(r.sub, p.sub) && (g(r.obj, p.obj) || keyMatch(r.obj, p.obj)) && r.act == p.act`,
		`g(r.sub, p.sub) && (keyMatch2(r.obj, p.obj) || p.obj == "*") && (r.act == p.act || p.act == "*")`,
		"r.sub == p.sub && regexMatch(r.obj, p.obj) && r.act == p.act",
		"g(r.sub, p.sub) && keyMatch3(r.obj, p.obj) && r.act == p.act || r.sub == \"root\"",
		"g(r.sub, p.sub) && !(globMatch(r.obj, p.obj)) && r.act == p.act",
	} {
		for seed := range uint64(3) {
			f.Add(m, seed, seed*7+1)
		}
	}
	f.Fuzz(func(t *testing.T, matcher string, a, b uint64) {
		if strings.ContainsAny(matcher, "\n\r#") {
			return // one matcher line, as model.conf holds it
		}
		rng := rand.New(rand.NewPCG(a, b))
		modelText, policyText, pol := fuzzCase(rng, matcher)
		if pol == nil {
			return
		}
		if _, err := newModelText(modelText); err != nil {
			return
		}
		askBoth(t, pol, stockInMemory(t, modelText, policyText), fuzzQuestions(rng, 12, policyText), modelText, policyText)
	})
}

// TestGeneratedCasesReachBothDeciders: the generator is worth fuzzing
// with: most cases load, a good share is decided by the index (so its
// exactness is what is tested), and the rest by casbin.
func TestGeneratedCasesReachBothDeciders(t *testing.T) {
	rng := rand.New(rand.NewPCG(20, 20))
	counts := map[string]int{}
	const n = 400
	for range n {
		_, _, pol := fuzzCase(rng, "")
		switch {
		case pol == nil:
			counts["refused"]++
		default:
			counts[pol.Decider()]++
		}
	}
	t.Logf("of %d generated cases: %v", n, counts)
	if counts[DeciderIndex] < n/4 || counts[DeciderCasbin] < n/10 || counts["refused"] > n/3 {
		t.Fatalf("generator out of balance: %v", counts)
	}
}

func newModelText(text string) (any, error) { return model.NewModelFromString(text) }

// TestPatternsMatchAsCasbinDoes: each matching function, prepared once at
// load, answers as casbin's own on every pattern and key of the fuzz
// vocabulary, and every key a pattern matches starts with the prefix the
// index buckets it by (one key only when it is taken for a literal).
func TestPatternsMatchAsCasbinDoes(t *testing.T) {
	keys := append(append([]string{"", "account:", "accounts:1", "xaccount:1", "ACCOUNT:1", "project:P/1/x", "plan:P-", "plan:PX",
		"project:P/", "project:Px", "project:P//x", "project:P/1/y/x", "class:c", "\xff"}, fuzzObjs...), fuzzPatterns...)
	casbinFn := map[string]func(k, p string) bool{
		"keyMatch": util.KeyMatch, "keyMatch2": util.KeyMatch2, "keyMatch3": util.KeyMatch3, "regexMatch": util.RegexMatch,
		"globMatch": func(k, p string) bool { ok, err := util.GlobMatch(k, p); return ok && err == nil },
	}
	for fn := range matchFuncs {
		for _, pattern := range append(append([]string{}, fuzzPatterns...), fuzzObjs...) {
			p, err := compilePattern(fn, pattern)
			if err != nil {
				continue // refused at load, as casbin would fail on it
			}
			for _, key := range keys {
				want := casbinFn[fn](key, pattern)
				if got := p.match(key); got != want {
					t.Fatalf("%s(%q, %q) = %v, casbin says %v", fn, key, pattern, got, want)
				}
				if want && !strings.HasPrefix(key, p.prefix) {
					t.Fatalf("%s(%q, %q) matches a key outside its bucket %q", fn, key, pattern, p.prefix)
				}
				if want && p.literal && key != p.prefix {
					t.Fatalf("%s(%q, %q) taken for the literal %q matches %q too", fn, key, pattern, p.prefix, key)
				}
			}
		}
	}
}
