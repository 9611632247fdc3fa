package main

import (
	"runtime/debug"
	"strings"
	"testing"
)

// TestHelpPrintsUsageAndStartsNothing: --help and -h on every command and
// policy tool print usage to stdout and exit 0, and so does "facade help
// CMD". The environment lacks what serve needs and holds a malformed
// value, so serve would fail and demo would start listening if help ran
// them, and help must not depend on the settings being right.
func TestHelpPrintsUsageAndStartsNothing(t *testing.T) {
	env := settingsFrom(map[string]string{"FACADE_LOG_LEVEL": "loud"})
	commands := [][]string{
		{}, {"serve"}, {"demo"}, {"token"}, {"seed"}, {"version"}, {"policy"},
		{"policy", "check"}, {"policy", "explain"}, {"policy", "test"}, {"policy", "who"},
		{"policy", "what"}, {"policy", "diff"}, {"policy", "report"},
	}
	for _, cmd := range commands {
		for _, flag := range []string{"--help", "-h"} {
			args := append(append([]string{}, cmd...), flag)
			code, stdout, stderr := runCmd(env, args...)
			if code != 0 || !strings.HasPrefix(stdout, "usage: facade") || stderr != "" {
				t.Errorf("facade %s: exit %d, stdout %q, stderr %q; want usage on stdout, exit 0",
					strings.Join(args, " "), code, stdout, stderr)
			}
		}
	}
	for _, cmd := range commands[1:] {
		_, want, _ := runCmd(env, append(cmd, "--help")...)
		code, stdout, stderr := runCmd(env, append([]string{"help"}, cmd...)...)
		if code != 0 || stdout != want || stderr != "" {
			t.Errorf("facade help %s: exit %d, stdout %q, stderr %q; want the command's --help",
				strings.Join(cmd, " "), code, stdout, stderr)
		}
	}
	for _, args := range [][]string{{"help"}, {"help", "help"}, {"help", "--help"}, {"-h"}} {
		if code, stdout, _ := runCmd(env, args...); code != 0 || !strings.HasPrefix(stdout, "usage: facade <command>") {
			t.Errorf("facade %s: exit %d %q", strings.Join(args, " "), code, stdout)
		}
	}
	_, out, _ := runCmd(env, "seed", "--help")
	for _, want := range []string{"--file", "--dry-run"} {
		if !strings.Contains(out, want) {
			t.Errorf("seed --help does not mention %s:\n%s", want, out)
		}
	}
	_, out, _ = runCmd(env, "--help")
	for _, c := range commands {
		if len(c) == 1 && !strings.Contains(out, "  "+c[0]+" ") {
			t.Errorf("facade --help does not list %s:\n%s", c[0], out)
		}
	}
}

// TestWrongCommandLinesExitTwoWithUsage: what a script gets wrong is exit
// 2 with the usage on stderr, never a half-started command.
func TestWrongCommandLinesExitTwoWithUsage(t *testing.T) {
	env := settingsFrom(map[string]string{"FACADE_JWT_SECRET": secret})
	cases := [][]string{
		{}, {"bogus"}, {"serve", "--bogus"}, {"serve", "extra"}, {"demo", "--port", "1"},
		{"token", "--sub"}, {"token", "--sub", "a", "--ttl", "soon"}, {"token", "--sub", "a", "--ttl", "48h"}, {"token", "--role", "student"},
		{"seed"}, {"seed", "--file"}, {"version", "--short"}, {"policy"}, {"policy", "bogus"},
		{"policy", "check", "--bogus"}, {"policy", "test", "a", "b"}, {"help", "bogus"}, {"--bogus"},
	}
	for _, args := range cases {
		code, stdout, stderr := runCmd(env, args...)
		if code != 2 || stdout != "" || !strings.Contains(stderr, "usage: facade") {
			t.Errorf("facade %s: exit %d, stdout %q, stderr %q; want exit 2 with usage on stderr",
				strings.Join(args, " "), code, stdout, stderr)
		}
	}
}

func TestVersionNamesTheBuild(t *testing.T) {
	env := settingsFrom(map[string]string{})
	for _, args := range [][]string{{"version"}, {"--version"}} {
		code, out, _ := runCmd(env, args...)
		if code != 0 || !strings.HasPrefix(out, "facade ") || !strings.Contains(out, "go1.") {
			t.Errorf("facade %s: exit %d %q", args[0], code, out)
		}
	}
	// What a binary built from a checkout carries (go build stamps it).
	info := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261123074101-c19be95a1b2c+dirty"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "c19be95a1b2c"}, {Key: "vcs.time", Value: "2026-11-23T07:41:01Z"},
			{Key: "vcs.modified", Value: "true"}}}
	want := "facade v0.0.0-20261123074101-c19be95a1b2c+dirty, commit c19be95a1b2c (modified) 2026-11-23T07:41:01Z, go1.26.8"
	if got := versionLine(info); got != want {
		t.Errorf("version line\n got %s\nwant %s", got, want)
	}
	if got := versionLine(&debug.BuildInfo{GoVersion: "go1.26.8"}); got != "facade (devel), commit unknown, go1.26.8" {
		t.Errorf("without VCS information: %s", got)
	}
}
