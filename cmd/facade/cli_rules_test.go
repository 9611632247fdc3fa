package main

import (
	"regexp"
	"strings"
	"testing"
)

// singleDashFlag is a flag spelled as the flag package spells it in its
// own messages (-bogus), not as the usage shows it (--bogus).
var singleDashFlag = regexp.MustCompile(`(^|[\s"])-[a-z]`)

// TestUsageErrorsNameTheToolAndTheFlag: every wrong command line is exit
// 2, nothing on stdout, and on stderr a first line that names the tool and
// spells the flag as the usage does (--name), the reason in words.
func TestUsageErrorsNameTheToolAndTheFlag(t *testing.T) {
	env := settingsFrom(map[string]string{"FACADE_JWT_SECRET": secret, "FACADE_MODEL": "../../model.conf", "FACADE_POLICY": "../../policy.csv"})
	for _, c := range []struct {
		args  []string
		first string // the first line of stderr
	}{
		{[]string{"serve", "--bogus"}, "facade serve: unknown flag --bogus"},
		{[]string{"seed", "-bogus"}, "facade seed: unknown flag --bogus"},
		{[]string{"token", "--sub"}, "facade token: --sub needs a value"},
		{[]string{"token", "--sub", "a", "--ttl", "soon"}, `facade token: --ttl "soon": invalid value (parse error)`},
		{[]string{"token", "--sub", "a", "--ttl", "48h"}, "facade token: --ttl 48h is longer than the longest lifetime the service accepts, 24h (FACADE_JWT_MAX_LIFETIME)"},
		{[]string{"token", "--sub", "a", "--ttl", "-1h"}, "facade token: --ttl must be positive"},
		{[]string{"seed", "--file", "x", "--dry-run=maybe"}, `facade seed: --dry-run "maybe": invalid value (parse error)`},
		{[]string{"policy", "check", "--bogus"}, "facade policy check: unknown flag --bogus"},
		{[]string{"policy", "explain", "--sub"}, "facade policy explain: --sub needs a value"},
		{[]string{"policy", "explain", "--group", "a\x01"}, `facade policy explain: --group "a\x01": invalid value (group "a\x01": a group name is 1 to 256 printable characters (no control characters))`},
		{[]string{"policy", "report", "--format", "xml"}, `facade policy report: --format "xml": csv or json`},
		{[]string{"policy", "bogus"}, `facade policy: unknown tool "bogus"`},
	} {
		code, stdout, stderr := runCmd(env, c.args...)
		first, _, _ := strings.Cut(stderr, "\n")
		if code != 2 || stdout != "" || first != c.first || singleDashFlag.MatchString(first) {
			t.Errorf("facade %s: exit %d, stdout %q, stderr's first line\n  %q\nwant exit 2 and\n  %q", strings.Join(c.args, " "), code, stdout, first, c.first)
		}
	}
}

// TestUnreadableInputFilesExitAlike: a file named on the command line that
// cannot be read is exit 2 with the reason on stderr, whichever command
// names it, and nothing on stdout.
func TestUnreadableInputFilesExitAlike(t *testing.T) {
	env := settingsFrom(map[string]string{"FACADE_MODEL": "../../model.conf", "FACADE_POLICY": "../../policy.csv"})
	for _, c := range []struct {
		args []string
		tool string
	}{
		{[]string{"seed", "--file", "/missing.json"}, "facade seed"},
		{[]string{"seed", "--file", "/missing.json", "--dry-run"}, "facade seed"},
		{[]string{"policy", "test", "/missing.json"}, "facade policy test"},
		{[]string{"policy", "check", "--policy", "/missing.json"}, "facade policy check"},
		{[]string{"policy", "check", "--model", "/missing.json"}, "facade policy check"},
		{[]string{"policy", "explain", "--policy", "/missing.json", "--sub", "a", "--obj", "account:1", "--act", "view_account"}, "facade policy explain"},
	} {
		code, stdout, stderr := runCmd(env, c.args...)
		if code != 2 || stdout != "" || !strings.HasPrefix(stderr, c.tool+": ") || !strings.Contains(stderr, "/missing.json: no such file or directory") {
			t.Errorf("facade %s: exit %d, stdout %q, stderr %q; want exit 2, the reason on stderr", strings.Join(c.args, " "), code, stdout, stderr)
		}
	}
}

// TestHelpListsEveryCommandAndTool: `facade --help` names every command
// (whoever adds one to commands), the policy command names every tool,
// and each tool has its own --help.
func TestHelpListsEveryCommandAndTool(t *testing.T) {
	env := settingsFrom(map[string]string{})
	_, top, _ := runCmd(env, "--help")
	for _, c := range commands {
		if !strings.Contains(top, "\n  "+c.name+" ") {
			t.Errorf("facade --help does not list %s:\n%s", c.name, top)
		}
	}
	_, policy, _ := runCmd(env, "policy", "--help")
	for _, tool := range policyTools {
		if !strings.Contains(top, tool) || !strings.Contains(policy, "\n  "+tool+" ") {
			t.Errorf("tool %s is missing from facade --help or facade policy --help:\n%s\n%s", tool, top, policy)
		}
		if code, out, _ := runCmd(env, "policy", tool, "--help"); code != 0 || !strings.HasPrefix(out, "usage: facade policy "+tool) {
			t.Errorf("facade policy %s --help: exit %d %q", tool, code, out)
		}
	}
	if !strings.Contains(top, "report") {
		t.Errorf("facade --help does not mention report:\n%s", top)
	}
}

// TestExplainSaysWhichActionWasMeant: a typo in --act is answered deny
// with the action it probably meant, for a grade and for anything else.
func TestExplainSaysWhichActionWasMeant(t *testing.T) {
	env := settingsFrom(map[string]string{"FACADE_MODEL": "../../model.conf", "FACADE_POLICY": "../../policy.csv"})
	for _, c := range [][]string{
		{"--sub", "bob", "--role", "professor", "--grade", "alice", "--act", "veiw"},
		{"--sub", "alice", "--obj", "account:1001", "--act", "veiw"},
		{"--sub", "alice", "--obj", "account:1001", "--act", "veiw_account"},
	} {
		code, out, _ := runCmd(env, append([]string{"policy", "explain"}, c...)...)
		want := `did you mean "view"?`
		if strings.HasSuffix(c[len(c)-1], "_account") {
			want = `did you mean "view_account"?`
		}
		if code != 1 || !strings.HasPrefix(out, "deny\n") || !strings.Contains(out, want) {
			t.Errorf("explain %s: exit %d %q, want deny and %s", strings.Join(c, " "), code, out, want)
		}
	}
	if _, out, _ := runCmd(env, "policy", "explain", "--sub", "alice", "--obj", "account:1001", "--act", "transfer"); strings.Contains(out, "did you mean") {
		t.Errorf("a known action gets a suggestion: %q", out)
	}
}
