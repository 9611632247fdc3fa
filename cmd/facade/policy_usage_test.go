package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	facade "github.com/facade-dev/facade"
	"github.com/facade-dev/facade/authz"
	"github.com/facade-dev/facade/authz/policytool"
	"github.com/facade-dev/facade/internal/testkit/testredis"
)

// TestPolicyUsageEndToEnd: two instances on one Redis record which lines
// their decisions went through, one restarts and adds to the same
// counts, the file is re-formatted and re-ordered; `facade policy usage`
// lists every line with its uses (unused first), --unused exits 1 while
// a line is unused, and the access review carries each row's last use.
func TestPolicyUsageEndToEnd(t *testing.T) {
	dir := t.TempDir()
	model, policy := filepath.Join(dir, "model.conf"), filepath.Join(dir, "policy.csv")
	write := func(path, text string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(model, mustRead(t, "../../model.conf"))
	write(policy, "p, team:web, project:WEB, view\ng, carol, team:web\ng, frank, team:web\np, alice, account:1001, view_account\n")
	url := testredis.URL(t)
	rdb := redisFromURL(t, url)
	instance := func() *authz.Authorizer {
		t.Helper()
		a, err := authz.New(model, policy, authz.Config{RecordUsage: true, Log: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	flush := func(a *authz.Authorizer) {
		t.Helper()
		if err := a.FlushUsage(context.Background(), rdb); err != nil {
			t.Fatal(err)
		}
	}
	one, two := instance(), instance()
	one.CanViewProject(facade.Principal{ID: "carol"}, mustProjectKey("WEB"))
	two.CanViewProject(facade.Principal{ID: "carol"}, mustProjectKey("WEB"))
	two.CanViewAccount(facade.Principal{ID: "mallory"}, mustAccountID("1001")) // denied: credits nothing
	flush(one)
	flush(two)
	restarted := instance()
	restarted.CanViewProject(facade.Principal{ID: "carol"}, mustProjectKey("WEB"))
	flush(restarted)

	env := settingsFrom(map[string]string{"FACADE_MODEL": model, "FACADE_POLICY": policy, "FACADE_REDIS_URL": url})
	code, out, stderr := runCmd(env, "policy", "usage", "--format", "json")
	var lines []policytool.LineUse
	if err := json.Unmarshal([]byte(out), &lines); code != 0 || err != nil || len(lines) != 4 {
		t.Fatalf("usage --format json: exit %d, %v, %q %s", code, err, out, stderr)
	}
	if lines[0].Text != "g, frank, team:web" || lines[1].Text != "p, alice, account:1001, view_account" || lines[0].Uses+lines[1].Uses != 0 ||
		lines[0].LastUsed != nil || lines[2].Uses != 3 || lines[3].Uses != 3 || lines[2].LastUsed == nil {
		t.Fatalf("usage: want the two unused lines first (file order), then carol's two lines with 3 uses each: %+v", lines)
	}

	// The file re-formatted and re-ordered: each line keeps its history.
	write(policy, "# web team\np,alice,account:1001,view_account\n\"g\",carol,team:web\n\np,  team:web,project:WEB,view\ng, frank, team:web\n")
	code, out, _ = runCmd(env, "policy", "usage", "--unused")
	if code != 1 || !strings.Contains(out, policy+":2 ") || !strings.Contains(out, policy+":6 ") ||
		strings.Contains(out, policy+":3 ") || !strings.Contains(out, "2 of 4 lines unused since") {
		t.Fatalf("usage --unused after re-formatting: exit %d\n%s", code, out)
	}
	code, out, _ = runCmd(env, "policy", "usage", "--format", "csv")
	if code != 0 || !strings.HasPrefix(out, "file,line,uses,last_used,text\n") || !strings.Contains(out, policy+",3,3,20") || !strings.Contains(out, policy+",5,3,20") {
		t.Fatalf("usage --format csv: exit %d\n%s", code, out)
	}
	code, out, _ = runCmd(env, "policy", "report", "--subject", "carol")
	if code != 0 || !strings.Contains(out, ",last_used\n") || !strings.Contains(out, "carol,principal,project:WEB,view,\""+policy+":5: p,  team:web,project:WEB,view\",,20") {
		t.Fatalf("report with usage: exit %d\n%s", code, out)
	}

	// Every line used: --unused lists none and exits 0.
	again := instance()
	again.CanViewAccount(facade.Principal{ID: "alice"}, mustAccountID("1001"))
	again.CanViewProject(facade.Principal{ID: "frank"}, mustProjectKey("WEB"))
	flush(again)
	if code, out, _ := runCmd(env, "policy", "usage", "--unused"); code != 0 || !strings.Contains(out, "0 of 4 lines unused") {
		t.Fatalf("usage --unused with every line used: exit %d\n%s", code, out)
	}
	for _, args := range [][]string{{"--since", "401d"}, {"--since", "soon"}, {"--since", "-3d"}, {"--format", "xml"}} {
		if code, _, _ := runCmd(env, append([]string{"policy", "usage"}, args...)...); code != 2 {
			t.Errorf("usage %v: exit %d, want 2", args, code)
		}
	}
	noRedis := settingsFrom(map[string]string{"FACADE_MODEL": model, "FACADE_POLICY": policy})
	if code, _, stderr := runCmd(noRedis, "policy", "usage"); code != 2 || !strings.Contains(stderr, "FACADE_REDIS_URL") {
		t.Fatalf("usage without Redis: exit %d %q", code, stderr)
	}
}

// TestPolicyDiffMarkdown: the review comment names the access gained and
// lost, a group's member with its own row, the line that causes each (in
// bold when the change adds or removes it), and the lines the change
// leaves granting nothing.
func TestPolicyDiffMarkdown(t *testing.T) {
	dir := t.TempDir()
	model, old, new := filepath.Join(dir, "model.conf"), filepath.Join(dir, "old.csv"), filepath.Join(dir, "new.csv")
	for path, text := range map[string]string{
		model: mustRead(t, "../../model.conf"),
		old:   "p, team:web, project:WEB, view\ng, carol, team:web\ng, frank, team:web\np, group:graders, class:english-101, view\ng, student:henry, class:english-101\n",
		new:   "p, team:web, project:WEB, view\ng, carol, team:web\ng, dave, team:web\np, group:graders, class:english-101, view\ng, student:henry, class:english-101\ng, student:ann, class:english-101\ng, erin, team:gone\n",
	} {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := settingsFrom(map[string]string{"FACADE_MODEL": model})
	code, out, _ := runCmd(env, "policy", "diff", "--old", old, "--new", new, "--format", "markdown")
	for _, want := range []string{
		"**2 gained, 1 lost**",
		"| dave (principal) | project:WEB | view | **`" + new + ":3: g, dave, team:web`**<br>`" + new + ":1: p, team:web, project:WEB, view` |",
		"| group:graders (group) | student:ann | view | **`" + new + ":6: g, student:ann, class:english-101`**<br>`" + new + ":4: p, group:graders, class:english-101, view` |",
		"#### Lost (1)",
		"| frank (principal) | project:WEB | view | **`" + old + ":3: g, frank, team:web`**",
		"#### Lines that now grant nothing (1)",
		"- `" + new + ":7: g, erin, team:gone`",
	} {
		if code != 1 || !strings.Contains(out, want) {
			t.Fatalf("diff --format markdown: exit %d, missing %q in\n%s", code, want, out)
		}
	}
	if code, out, _ := runCmd(env, "policy", "diff", "--old", new, "--new", new, "--format", "markdown"); code != 0 || !strings.Contains(out, "No access changes") {
		t.Fatalf("markdown diff of identical files: exit %d\n%s", code, out)
	}
}
