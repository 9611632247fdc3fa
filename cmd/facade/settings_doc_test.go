package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// settingsDoc is the settings reference, whose table is written from
// settingTable.
const settingsDoc = "../../docs/settings.md"

// The markers around the written table in settingsDoc.
const (
	tableStart = "<!-- settings table: written by `go generate ./cmd/facade` from cmd/facade/config.go; do not edit -->\n"
	tableEnd   = "<!-- end of settings table -->\n"
)

var writeSettingsDoc = flag.Bool("write-settings-doc", false, "write docs/settings.md's table from settingTable (go generate ./cmd/facade)")

// TestSettingsReferenceIsTheTable: docs/settings.md's table is what the
// table of settings says, entry for entry: a setting without words, a
// default changed in its part's constant, or an entry added without
// `go generate ./cmd/facade` turns this red.
func TestSettingsReferenceIsTheTable(t *testing.T) {
	b, err := os.ReadFile(settingsDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	head, rest, ok := strings.Cut(doc, tableStart)
	_, tail, ok2 := strings.Cut(rest, tableEnd)
	if !ok || !ok2 {
		t.Fatalf("%s has lost its table markers", settingsDoc)
	}
	seen := map[string]bool{}
	for _, st := range settingTable(&settings{}) {
		if seen[st.name] {
			t.Errorf("%s is in the table twice", st.name)
		}
		seen[st.name] = true
		if strings.TrimSpace(st.doc) == "" {
			t.Errorf("%s has no words for %s (its entry's doc)", st.name, settingsDoc)
		}
	}
	want := head + tableStart + settingsTableText() + tableEnd + tail
	if *writeSettingsDoc {
		if err := os.WriteFile(settingsDoc, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if doc != want {
		t.Errorf("%s's table is not the settings table (cmd/facade/config.go); run go generate ./cmd/facade. It should read:\n%s",
			settingsDoc, settingsTableText())
	}
}

// settingsTableText is the reference table: a row per setting, in the
// table's order.
func settingsTableText() string {
	var b strings.Builder
	b.WriteString("| variable | default | meaning |\n|---|---|---|\n")
	for _, st := range settingTable(&settings{}) {
		name := "`" + st.name + "`"
		if st.secret {
			name += " (or `_FILE`)"
		}
		def := st.shown
		switch {
		case def != "":
		case st.def != "":
			def = "`" + st.def + "`"
		default:
			def = "none"
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", name, cell(def), cell(st.doc))
	}
	return b.String()
}

// cell keeps a table cell one cell: a | in it would start another.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// TestEverySettingReadIsInTheTable: a variable read by name anywhere in
// the command (getenv("FACADE_...")) is one of the table's, so none is
// read without a default, a parser and its line in docs/settings.md.
func TestEverySettingReadIsInTheTable(t *testing.T) {
	known := map[string]bool{}
	for _, st := range settingTable(&settings{}) {
		known[st.name] = true
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	read := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) != 1 || !readsEnvironment(call.Fun) {
				return true
			}
			lit, ok := call.Args[0].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			v, _ := strconv.Unquote(lit.Value)
			read++
			if !known[v] {
				t.Errorf("%s: %s is read but is not in the settings table (cmd/facade/config.go)", fset.Position(lit.Pos()), v)
			}
			return true
		})
	}
	if read == 0 {
		t.Error("no variable read by name was found; the search is broken")
	}
}

// readsEnvironment: getenv(...), os.Getenv(...) or os.LookupEnv(...).
func readsEnvironment(fun ast.Expr) bool {
	switch f := fun.(type) {
	case *ast.Ident:
		return f.Name == "getenv"
	case *ast.SelectorExpr:
		return f.Sel.Name == "Getenv" || f.Sel.Name == "LookupEnv" || f.Sel.Name == "getenv"
	}
	return false
}
