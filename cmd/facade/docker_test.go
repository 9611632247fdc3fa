package main

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDockerfileBuildsAStaticStampedBinary runs the Dockerfile's production
// build command as a plain command (there is no Docker engine here; the
// image is built where Docker runs) with a version and commit, and checks
// what it makes: a static binary (no interpreter, no shared library) that
// says its version and commit, holds no demo, and was built with -trimpath.
func TestDockerfileBuildsAStaticStampedBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary: a minute on a busy machine")
	}
	df := mustRead(t, "../../Dockerfile")
	checkDockerfileRules(t, df)
	var build string
	for _, l := range dockerRuns(df) {
		if strings.Contains(l, "go build") && !strings.Contains(l, "-tags demo") {
			build = l
		}
	}
	if build == "" || !strings.Contains(build, "-o /out/facade ") {
		t.Fatalf("the Dockerfile has no production `go build ... -o /out/facade` step:\n%s", build)
	}
	out := filepath.Join(t.TempDir(), "facade")
	cmd := exec.Command("sh", "-c", strings.Replace(build, "-o /out/facade ", "-o "+out+" ", 1))
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "VERSION=v9.8.7-test", "COMMIT=0123456789abcdef")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", build, err, b)
	}
	f, err := elf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	libs, _ := f.ImportedLibraries()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("the binary names a dynamic loader (PT_INTERP): not static, it will not start on scratch")
		}
	}
	f.Close()
	if len(libs) > 0 {
		t.Errorf("the binary needs shared libraries %v", libs)
	}
	b, err := exec.Command(out, "version").CombinedOutput()
	if got := string(b); err != nil || !strings.Contains(got, "facade v9.8.7-test") || !strings.Contains(got, "commit 0123456789abcdef") {
		t.Errorf("`facade version` of the image's binary: %q %v; want the stamped version and commit", got, err)
	}
	info := goTool(t, "version", "-m", out)
	for _, want := range []string{"-trimpath=true", "CGO_ENABLED=0"} {
		if !strings.Contains(info, want) {
			t.Errorf("built without %s:\n%s", want, info)
		}
	}
	for _, m := range demoModules {
		if strings.Contains(info, "\t"+m) {
			t.Errorf("the image's binary links the demo's module %s", m)
		}
	}
}

// checkDockerfileRules: every base pinned to an exact version (never
// latest, never a bare name), the images run as a numeric non-root user.
func checkDockerfileRules(t *testing.T, df string) {
	t.Helper()
	args := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^ARG (\w+)=(\S+)$`).FindAllStringSubmatch(df, -1) {
		args[m[1]] = m[2]
	}
	stages := map[string]bool{}
	exact := regexp.MustCompile(`^[\w./-]+:\d+(\.\d+){2}[\w.-]*(@sha256:[0-9a-f]{64})?$`)
	for _, m := range regexp.MustCompile(`(?m)^FROM (\S+)(?: AS (\S+))?$`).FindAllStringSubmatch(df, -1) {
		image := regexp.MustCompile(`\$\{(\w+)\}`).ReplaceAllStringFunc(m[1], func(v string) string { return args[v[2:len(v)-1]] })
		if !stages[image] && image != "scratch" && !exact.MatchString(image) {
			t.Errorf("FROM %s (%s): pin an exact version", m[1], image)
		}
		stages[m[2]] = true
	}
	goMod := mustRead(t, "../../go.mod")
	goLine := regexp.MustCompile(`(?m)^go (\S+)$`).FindStringSubmatch(goMod)
	if goLine == nil || !strings.Contains(args["GO_IMAGE"], ":"+goLine[1]+"-") {
		t.Errorf("GO_IMAGE %q is not the Go of go.mod (%v)", args["GO_IMAGE"], goLine)
	}
	users := regexp.MustCompile(`(?m)^USER (\d+):(\d+)$`).FindAllStringSubmatch(df, -1)
	if len(users) != strings.Count(df, "\nFROM scratch") || len(users) == 0 {
		t.Errorf("each image needs a numeric USER: %v", users)
	}
	for _, u := range users {
		if u[1] == "0" || u[2] == "0" {
			t.Errorf("USER %s:%s is root", u[1], u[2])
		}
	}
}

// dockerRuns are the Dockerfile's RUN commands, continuation lines joined.
func dockerRuns(df string) []string {
	var out []string
	for _, l := range strings.Split(strings.ReplaceAll(df, "\\\n", " "), "\n") {
		if cmd, ok := strings.CutPrefix(l, "RUN "); ok {
			out = append(out, cmd)
		}
	}
	return out
}
