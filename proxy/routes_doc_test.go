package proxy

import (
	"flag"
	"os"
	"slices"
	"strings"
	"testing"
)

var updateDoc = flag.Bool("update-doc", false, "rewrite the table of docs/build-routes.md from the route table")

// docTableHeader starts the table of docs/build-routes.md; the table runs
// to the first blank line.
const docTableHeader = "| route | permission | answer | expand passed on | filters |\n|---|---|---|---|---|\n"

// TestBuildRoutesDocIsTheRouteTable: the table of build routes in
// docs/build-routes.md is rendered from Routes, so the two cannot
// disagree. After changing the table, run
//
//	go test ./proxy -run TestBuildRoutesDocIsTheRouteTable -update-doc
func TestBuildRoutesDocIsTheRouteTable(t *testing.T) {
	const path = "../docs/build-routes.md"
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	start := strings.Index(doc, docTableHeader)
	if start < 0 {
		t.Fatalf("docs/build-routes.md has no table starting %q", docTableHeader)
	}
	end := start + strings.Index(doc[start:], "\n\n") + 1
	want := renderRouteTable()
	if doc[start:end] == want {
		return
	}
	if *updateDoc {
		if err := os.WriteFile(path, []byte(doc[:start]+want+doc[end:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("docs/build-routes.md's table is not the route table's; run with -update-doc. Want:\n%s", want)
}

// renderRouteTable writes one row per route: its paths, the permission,
// the answer, and the expand values and filters passed on (a list already
// shown on an earlier row is named by that row's first path).
func renderRouteTable() string {
	var b strings.Builder
	b.WriteString(docTableHeader)
	shown := map[string]string{}
	list := func(values []string, first string) string {
		if len(values) == 0 {
			return "—"
		}
		text := spellList(values)
		if earlier, ok := shown[text]; ok {
			return "as `" + earlier + "`"
		}
		shown[text] = first
		return text
	}
	for i := range Routes {
		rt := &Routes[i]
		paths := make([]string, len(rt.Paths))
		for j, p := range rt.Paths {
			paths[j] = "`" + shownPath(p, rt.Key) + "`"
		}
		method := "GET "
		if rt.View == ViewFavourite {
			method = "POST`, `DELETE "
		}
		paths[0] = "`" + method + paths[0][1:]
		first := shownPath(rt.Paths[0], rt.Key)
		b.WriteString("| " + strings.Join(paths, ", ") + " | " + needText[rt.Need] + " | " + rt.Answer + " | " +
			list(rt.Expand, first) + " | " + list(rt.Filters, first) + " |\n")
	}
	return b.String()
}

var needText = map[Need]string{
	NeedNothing: "none: filtered",
	NeedPlan:    "`plan:K-P` or `project:K`",
	NeedProject: "`project:K`, or a plan of it",
}

// shownPath is a pattern as docs/build-routes.md writes it: below
// /rest/api/latest, its key spelled as the route's key kind reads it.
func shownPath(pattern string, kind KeyKind) string {
	p := strings.TrimPrefix(pattern, rest)
	key := map[KeyKind]string{KeyProject: "{K}", KeyPlan: "{K-P}", KeyResult: "{K-P-N}", KeyJobResult: "{K-P-J-N}", KeyArtifact: "{K-P-N}"}[kind]
	if strings.Contains(p, ":number") {
		key = "{K-P}"
	}
	p = strings.Replace(p, ":number", "{N}", 1)
	p = strings.Replace(p, ":key", key, 1)
	p = strings.Replace(p, ":resultKey", key, 1)
	return strings.Replace(p, "/*", "/...", 1)
}

// spellList writes expand values or filters: "`a`, `b`", or for a family
// under one prefix "`p` and below it `a`, `b`". Bamboo's test expands
// (testExpands, 25 values) are written as one: "`testResults.{list}.testResult.errors`
// and what lies above it".
func spellList(values []string) string {
	quote := func(vs []string) string {
		out := "`" + strings.Join(vs, "`, `") + "`"
		return strings.ReplaceAll(out, testsMark+"`", "testResults.{list}.testResult.errors` and what lies above it ({list}: `"+strings.Join(testLists, "`, `")+"`)")
	}
	values = markTests(values)
	prefix := values[0]
	var below []string
	for _, v := range values[1:] {
		rest, ok := strings.CutPrefix(v, prefix+".")
		if !ok {
			return quote(values)
		}
		below = append(below, rest)
	}
	if len(below) == 0 {
		return quote(values)
	}
	return "`" + prefix + "` and below it " + quote(below)
}

// testsMark stands for the test expands in a list (spellList).
const testsMark = "testResults.*"

// markTests replaces the test expands in values (alone or below one
// prefix) by testsMark once.
func markTests(values []string) []string {
	var out []string
	for _, v := range values {
		for _, tv := range testExpands {
			if v == tv || strings.HasSuffix(v, "."+tv) {
				v = strings.TrimSuffix(v, tv) + testsMark
				break
			}
		}
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}
