package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// demoParts are what the demo links and the production binary must not:
// modules (go version -m) and packages (their symbols, go tool nm).
var (
	demoModules  = []string{"github.com/alicebob/miniredis", "github.com/yuin/gopher-lua", "github.com/zitadel/", "github.com/go-chi/chi"}
	demoPackages = []string{"github.com/facade-dev/facade/upstream/bambootest.", "github.com/facade-dev/facade/auth/demoidp.", "net/http/httptest."}
)

// TestProductionBinaryHoldsNoDemo builds the binary with the README's
// production build command and finds none of the demo's modules in its
// build information and none of its packages in its symbols: nobody
// wants a fake identity provider linked into what guards their grades.
func TestProductionBinaryHoldsNoDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary: a minute on a busy machine")
	}
	line := readmeLine(t, "go build ", " ./cmd/facade")
	bin := buildAsWritten(t, line)
	info := goTool(t, "version", "-m", bin)
	syms := goTool(t, "tool", "nm", bin)
	for _, m := range demoModules {
		if strings.Contains(info, "\t"+m) {
			t.Errorf("`%s` links the demo's module %s:\n%s", line, m, info)
		}
	}
	for _, p := range demoPackages {
		if strings.Contains(syms, " "+p) {
			t.Errorf("`%s` links the demo's package %s", line, strings.TrimSuffix(p, "."))
		}
	}
	if !strings.Contains(syms, " github.com/facade-dev/facade/server.") {
		t.Fatal("go tool nm shows no symbols of the server package: the check above proves nothing")
	}
}

// readmeLine is the first line of README.md that starts with prefix and
// whose command (before any # comment) ends with suffix.
func readmeLine(t *testing.T, prefix, suffix string) string {
	t.Helper()
	for _, l := range strings.Split(mustRead(t, "../../README.md"), "\n") {
		cmd, _, _ := strings.Cut(l, "#")
		if cmd = strings.TrimSpace(cmd); strings.HasPrefix(cmd, prefix) && strings.HasSuffix(cmd, suffix) {
			return cmd
		}
	}
	t.Fatalf("README.md has no line `%s...%s`", prefix, suffix)
	return ""
}

// buildAsWritten runs a `[VAR=value ...] go build ... -o OUT ...` line in
// the repository's root, as a person pastes it, writing OUT into a
// temporary directory instead; it returns the binary's path.
func buildAsWritten(t *testing.T, line string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "facade")
	args := strings.Fields(line)
	env := os.Environ()
	for len(args) > 0 && strings.Contains(args[0], "=") {
		env = append(env, args[0])
		args = args[1:]
	}
	if len(args) < 2 || args[0] != "go" || args[1] != "build" {
		t.Fatalf("not a go build command: %q", line)
	}
	found := false
	for i := range args[:len(args)-1] {
		if args[i] == "-o" {
			args[i+1], found = out, true
		}
	}
	if !found {
		t.Fatalf("%q names no -o output", line)
	}
	cmd := exec.Command("go", args[1:]...)
	cmd.Dir, cmd.Env = "../..", env
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", line, err, b)
	}
	return out
}

func goTool(t *testing.T, args ...string) string {
	t.Helper()
	b, err := exec.Command("go", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	return string(b)
}
