package facade

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// layoutName is a folder as the Layout table names it: `auth/`,
// `server/problem`.
var layoutName = regexp.MustCompile("`([a-z0-9_./-]+?)/?`")

// TestREADMELayoutNamesEveryPackage: the README's Layout table is the map
// of the repository, so every folder holding Go code is named in it
// (in a row's first cell), and every folder it names exists.
func TestREADMELayoutNamesEveryPackage(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), "\n## Layout\n")
	if !ok {
		t.Fatal("README.md has no Layout section")
	}
	table, _, _ = strings.Cut(table, "\n## ")
	named := map[string]bool{}
	for _, line := range strings.Split(table, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 3 {
			continue
		}
		for _, m := range layoutName.FindAllStringSubmatch(cells[1], -1) {
			named[m[1]] = true
		}
	}
	if len(named) == 0 {
		t.Fatal("the Layout table names no folder")
	}
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() || path == "." {
			return nil
		}
		if name := d.Name(); strings.HasPrefix(name, ".") || name == "node_modules" || name == "testdata" {
			return filepath.SkipDir
		}
		if hasGo(t, path) && !named[filepath.ToSlash(path)] {
			t.Errorf("README.md's Layout table does not name %s/", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for name := range named {
		if _, err := os.Stat(name); err != nil {
			t.Errorf("README.md's Layout table names %s, which does not exist", name)
		}
	}
}

// hasGo reports whether dir holds a Go file of its own (tests included).
func hasGo(t *testing.T, dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".go") {
			return true
		}
	}
	return false
}
