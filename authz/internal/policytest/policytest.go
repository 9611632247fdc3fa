// Package policytest holds what the tests of authz and the packages split
// from it (compiled, grantusage, policytool) share: the repository's
// model, policy files in a temporary directory, the model families ops
// write, random and contract-sized policies. It exists so that each of
// those packages tests the same files without a copy of the helpers.
package policytest

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// RepoFile is the path of name at the repository's root (model.conf,
// policy.csv): the directory above the test's that holds go.mod.
func RepoFile(tb testing.TB, name string) string {
	tb.Helper()
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, name)
		}
		up := filepath.Dir(dir)
		if up == dir {
			tb.Fatal("no go.mod above the test's directory")
		}
		dir = up
	}
}

// ShippedModel is the repository's model.conf: every test runs against the
// file ops actually get.
func ShippedModel(tb testing.TB) string {
	tb.Helper()
	b, err := os.ReadFile(RepoFile(tb, "model.conf"))
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// Files writes the shipped model and the given policy lines into a fresh
// directory and returns both paths.
func Files(tb testing.TB, lines ...string) (modelPath, policyPath string) {
	tb.Helper()
	return ModelFiles(tb, ShippedModel(tb), lines...)
}

// ModelFiles writes modelText and the given policy lines into a fresh
// directory and returns both paths.
func ModelFiles(tb testing.TB, modelText string, lines ...string) (modelPath, policyPath string) {
	tb.Helper()
	dir := tb.TempDir()
	modelPath, policyPath = filepath.Join(dir, "model.conf"), filepath.Join(dir, "policy.csv")
	WriteFile(tb, modelPath, modelText)
	WriteFile(tb, policyPath, strings.Join(lines, "\n")+"\n")
	return modelPath, policyPath
}

// WriteFile writes text to path.
func WriteFile(tb testing.TB, path, text string) {
	tb.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		tb.Fatal(err)
	}
}

// ReplaceFile swaps in new content by rename, as editors and config
// managers do.
func ReplaceFile(t testing.TB, path, text string) {
	t.Helper()
	tmp := path + ".tmp"
	WriteFile(t, tmp, text)
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// Families are model.conf variants ops may write; each must be decided by
// the index (recognized) with casbin's answers.
var Families = map[string]string{
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

// FamilyModel is family name's model text.
func FamilyModel(t testing.TB, name string) string {
	if name == "shipped" {
		return ShippedModel(t)
	}
	return Families[name]
}

// RandomPolicy writes g lines (nested groups, cycles, chains past casbin's
// 10 links, students in classes, plans in projects) and p lines (literal,
// wildcard, deny) over a small vocabulary so questions often hit.
func RandomPolicy(rng *rand.Rand, eft bool, g2 bool) []string {
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
		lines = append(lines, fmt.Sprintf("g, %s, %s", Pick(rng, append(principals, groups...)), Pick(rng, groups)))
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
		lines = append(lines, fmt.Sprintf("g, %s, %s", Pick(rng, []string{"ben", "team:a", "plan:P-X", "account:1"}), Pick(rng, principals)))
	}
	for range rng.IntN(12) {
		from := Pick(rng, []string{"student:s1", "student:s2", "plan:P-X", "plan:P-Y", "class:c1"})
		lines = append(lines, fmt.Sprintf("%s, %s, %s", objG, from, Pick(rng, []string{"class:c1", "class:c2", "project:P", "project:Q", "class:all"})))
	}
	for range 1 + rng.IntN(25) {
		obj := Pick(rng, objects)
		if rng.IntN(3) == 0 {
			obj = Pick(rng, patterns)
		}
		line := fmt.Sprintf("p, %s, %s, %s", Pick(rng, append(principals, groups...)), obj, Pick(rng, acts))
		if eft {
			line += ", " + Pick(rng, []string{"allow", "allow", "deny", "maybe"})
		}
		lines = append(lines, line)
	}
	return lines
}

// Pick is one of xs, drawn by rng.
func Pick[T any](rng *rand.Rand, xs []T) T { return xs[rng.IntN(len(xs))] }

// RootModel is the shipped model with casbin's superuser idiom appended at
// the top level (|| r.sub == "root"): outside the index's families, so
// casbin's own Enforce decides it, scanning p rows.
func RootModel(tb testing.TB) string {
	return strings.Replace(ShippedModel(tb), "&& r.act == p.act\n", "&& r.act == p.act || r.sub == \"root\"\n", 1)
}

// AbacModel is valid casbin the index does not decide: a condition on the
// object's text (accounts whose id starts with the principal's name) next
// to ordinary grants. casbin's own Enforce must decide it, and say so.
const AbacModel = `[request_definition]
r = sub, obj, act

[policy_definition]
p = sub, obj, act

[role_definition]
g = _, _

[policy_effect]
e = some(where (p.eft == allow))

[matchers]
m = (g(r.sub, p.sub) && r.obj == p.obj && r.act == p.act) || (r.act == "view_account" && r.obj == "account:" + r.sub + "-own")
`

// CSVField writes one policy.csv field as ops would: quoted when casbin's
// CSV reading needs it (a comma or a quote inside, a space at either end).
func CSVField(f string) string {
	if f != "" && !strings.ContainsAny(f, `,"`) && strings.TrimSpace(f) == f {
		return f
	}
	return `"` + strings.ReplaceAll(f, `"`, `""`) + `"`
}

// AdminModel is the admin idiom of casbin's documentation: a line whose
// object or action is "*" matches every object or action, because the
// matcher names "*".
const AdminModel = `[request_definition]
r = sub, obj, act

[policy_definition]
p = sub, obj, act

[role_definition]
g = _, _

[policy_effect]
e = some(where (p.eft == allow))

[matchers]
m = g(r.sub, p.sub) && (keyMatch2(r.obj, p.obj) || p.obj == "*") && (r.act == p.act || p.act == "*")
`

// AdminLines use the admin idiom under AdminModel: "*" for every object
// or action, and keyMatch2's patterns.
var AdminLines = []string{
	"p, role:admin, *, *",
	"g, ann, role:admin",
	"p, ben, account:[0-9]+, view_account", // keyMatch2 reads a regular expression
	"p, ben, project:(WEB|API), view",      // and an alternation
	"p, cat, project:WEB/:plan, view",      // and a :name segment
	"p, role:auditor, project:WEB, *",
	"g, dan, role:auditor",
}

// AbacLines are a policy under AbacModel: a grant through a team.
var AbacLines = []string{"p, team:x, account:1001, view_account", "g, alice, team:x"}
