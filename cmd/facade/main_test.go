package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/accounts"
	"github.com/facade-dev/facade/auth"
	"github.com/facade-dev/facade/authz/grantusage"
	"github.com/facade-dev/facade/grades"
	"github.com/facade-dev/facade/internal/testkit/testlog"
	"github.com/facade-dev/facade/internal/testkit/testredis"
	"github.com/facade-dev/facade/upstream/bambootest"
)

func TestMain(m *testing.M) { testredis.Main(m) }

const secret = "cmd-test-secret-that-is-32-bytes-or-more"

// testSessionKey is FACADE_SESSION_KEYS for the tests that sign in: base64
// of 32 bytes that look random (serve refuses a repeated byte, secretcheck.go).
const testSessionKey = "Vu2EJrdMV/TiqrJigM1h3roEa3l7JYAhVYJ7BIOE5nQ="

// settingsFrom is the settings source of a test: vars, nothing else.
func settingsFrom(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func runCmd(getenv func(string) string, args ...string) (code int, stdout, stderr string) {
	return runCmdWithInput(getenv, "", args...)
}

func runCmdWithInput(getenv func(string) string, stdin string, args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(args, getenv, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

// TestServeListsEveryBadSettingAtOnce: a person fixing a deployment sees
// every problem in one run, one line each naming its variable, and
// nothing starts.
func TestServeListsEveryBadSettingAtOnce(t *testing.T) {
	files := map[string]string{"FACADE_MODEL": "../../model.conf", "FACADE_POLICY": "../../policy.csv"}
	with := func(vars map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range files {
			out[k] = v
		}
		for k, v := range vars {
			out[k] = v
		}
		return out
	}
	redisURL := "redis://127.0.0.1:1/0"
	cases := []struct {
		vars map[string]string
		want []string
	}{
		{with(nil), []string{"FACADE_REDIS_URL", "FACADE_JWT_SECRET"}},
		{map[string]string{}, []string{"FACADE_REDIS_URL", "FACADE_JWT_SECRET", "FACADE_MODEL", "FACADE_POLICY"}},
		{with(map[string]string{"FACADE_REDIS_URL": redisURL, "FACADE_JWT_SECRET": "short"}), []string{"FACADE_JWT_SECRET"}},
		{with(map[string]string{"FACADE_REDIS_URL": "mysql://x", "FACADE_JWT_SECRET": secret}), []string{"FACADE_REDIS_URL"}},
		{with(map[string]string{"FACADE_REDIS_URL": redisURL, "FACADE_JWKS_URL": "https://idp.example/jwks"}),
			[]string{"FACADE_JWT_ISSUER", "FACADE_JWT_AUDIENCE"}},
		{with(map[string]string{
			"FACADE_REDIS_URL": redisURL, "FACADE_JWT_SECRET": secret, "FACADE_CORS_WRITE_ORIGINS": "*",
			"FACADE_CACHE_TTL": "soon", "FACADE_UPSTREAM_TIMEOUT": "0", "FACADE_MAX_TRANSFER": "-1",
			"FACADE_LOG_LEVEL": "verbose", "FACADE_RATE_LIMIT": "lots", "FACADE_TRUSTED_PROXIES": "10.0.0.0/33",
			"FACADE_POLICY": "/nonexistent/policy.csv",
		}), []string{"FACADE_CORS_WRITE_ORIGINS", "FACADE_CACHE_TTL", "FACADE_UPSTREAM_TIMEOUT", "FACADE_MAX_TRANSFER",
			"FACADE_LOG_LEVEL", "FACADE_RATE_LIMIT", "FACADE_TRUSTED_PROXIES", "FACADE_POLICY"}},
		{with(map[string]string{"FACADE_REDIS_URL": redisURL, "FACADE_JWT_SECRET": secret,
			"FACADE_CACHE_FINISHED": "forever", "FACADE_LIVE_INTERVAL": "0"}), []string{"FACADE_CACHE_FINISHED", "FACADE_LIVE_INTERVAL"}},
	}
	for _, c := range cases {
		code, stdout, stderr := runCmd(settingsFrom(c.vars), "serve")
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		if code != 2 || stdout != "" || len(lines) != len(c.want) {
			t.Errorf("env %v: exit %d, %d lines; want exit 2 and %d lines naming %v:\n%s", c.vars, code, len(lines), len(c.want), c.want, stderr)
			continue
		}
		for _, name := range c.want {
			if !strings.Contains(stderr, "facade serve: "+name) {
				t.Errorf("env %v: no line naming %s:\n%s", c.vars, name, stderr)
			}
		}
	}
}

func TestTokenCommand(t *testing.T) {
	env := settingsFrom(map[string]string{"FACADE_JWT_SECRET": secret})
	code, out, stderr := runCmd(env, "token", "--sub", "alice", "--role", "student", "--ttl", "5m")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	tokens, err := auth.NewTokens(context.Background(), auth.TokenConfig{Secret: []byte(secret)})
	if err != nil {
		t.Fatal(err)
	}
	id, err := tokens.Identity(context.Background(), strings.TrimSpace(out))
	if p := id.Principal; err != nil || p.ID != "alice" || p.Role != "student" {
		t.Fatalf("minted token: %+v %v", id, err)
	}
	if code, _, _ := runCmd(env, "token", "--role", "student"); code == 0 {
		t.Fatal("token without --sub succeeded")
	}
	env = settingsFrom(map[string]string{})
	if code, _, stderr := runCmd(env, "token", "--sub", "a"); code == 0 || !strings.Contains(stderr, "FACADE_JWT_SECRET") {
		t.Fatalf("token without secret: %d %q", code, stderr)
	}
}

func TestSeedCommand(t *testing.T) {
	url := testredis.URL(t)
	env := settingsFrom(map[string]string{"FACADE_REDIS_URL": url})
	file := filepath.Join(t.TempDir(), "seed.json")
	write := func(body string) {
		if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"accounts": [{"id": "1001", "owner": "alice", "currency": "EUR", "balance": "250.00"}],
	        "grades":   [{"student_id": "alice", "subject": "english", "grade": "B+"}]}`)
	if code, out, stderr := runCmd(env, "seed", "--file", file); code != 0 || !strings.Contains(out, "1 of 1 accounts") {
		t.Fatalf("seed: %d %q %q", code, out, stderr)
	}
	// A second seed with another balance never overwrites the first.
	write(`{"accounts": [{"id": "1001", "owner": "alice", "currency": "EUR", "balance": "9999.00"}], "grades": []}`)
	if code, out, _ := runCmd(env, "seed", "--file", file); code != 0 || !strings.Contains(out, "0 of 1 accounts") {
		t.Fatalf("reseed: %d %q", code, out)
	}
	rdb := redisFromURL(t, url)
	a, err := accounts.NewStore(rdb, accounts.Config{}).Get(context.Background(), mustAccountID("1001"))
	if err != nil || a.BalanceAmount().String() != "250.00" {
		t.Fatalf("balance after reseed: %+v %v", a, err)
	}
	g, err := grades.NewStore(rdb, grades.Config{}).Get(context.Background(), mustStudentID("alice"), "english")
	if err != nil || g.Grade != "B+" {
		t.Fatalf("seeded grade: %+v %v", g, err)
	}
	for _, bad := range []string{
		`{"accounts": [{"id": "5005", "owner": "eve", "currency": "EUR", "balance": "1.00"}, {"id": "x", "owner": "x", "currency": "EUR", "balance": "1.001"}]}`,
		`{"accounts": [{"id": "5005", "owner": "eve", "currency": "XXX", "balance": "1"}]}`,
		`{"acounts": []}`, `not json`,
		`{"accounts": [{"id": "5005", "owner": "eve", "currency": "EUR", "balance": "1.00"}], "grades": [{"student_id": "bob", "subject": "english", "grade": "Z"}]}`,
	} {
		write(bad)
		if code, _, _ := runCmd(env, "seed", "--file", file); code != 1 {
			t.Errorf("seed %s: exit %d, want 1", bad, code)
		}
	}
	// A file with an error anywhere writes nothing at all.
	if _, err := accounts.NewStore(rdb, accounts.Config{}).Get(context.Background(), mustAccountID("5005")); err == nil {
		t.Fatal("a rejected seed file still created account 5005")
	}
}

func TestPolicyCommands(t *testing.T) {
	env := settingsFrom(map[string]string{"FACADE_MODEL": "../../model.conf", "FACADE_POLICY": "../../policy.csv"})
	if code, out, stderr := runCmd(env, "policy", "check"); code != 0 {
		t.Fatalf("repository policy: exit %d\n%s%s", code, out, stderr)
	}
	broken := filepath.Join(t.TempDir(), "policy.csv")
	if err := os.WriteFile(broken, []byte("p, bob, class:english-101, view\np, bob, class:english-101\ng, only-one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ := runCmd(env, "policy", "check", "--policy", broken)
	if code != 1 || !strings.Contains(out, broken+":2") || !strings.Contains(out, broken+":3") {
		t.Fatalf("broken policy: exit %d\n%s", code, out)
	}
	code, out, _ = runCmd(env, "policy", "explain", "--sub", "alice", "--role", "customer", "--obj", "account:1001", "--act", "view_account")
	if code != 0 || !strings.HasPrefix(out, "allow") || !strings.Contains(out, "p, alice, account:1001, view_account") {
		t.Fatalf("explain allow: %d %q", code, out)
	}
	code, out, _ = runCmd(env, "policy", "explain", "--sub", "mallory", "--role", "customer", "--obj", "account:1001", "--act", "view_account")
	if code != 1 || !strings.HasPrefix(out, "deny") {
		t.Fatalf("explain deny: exit %d, want 1: %q", code, out)
	}
	code, out, _ = runCmd(env, "policy", "explain", "--sub", "dev", "--obj", "project:PROJ", "--act", "view")
	if code != 0 || !strings.Contains(out, "g, dev, team:developers") || !strings.Contains(out, "g, team:developers, team:platform") {
		t.Fatalf("explain through nested groups: exit %d, want the chain of g lines: %q", code, out)
	}
	if code, _, _ = runCmd(env, "policy", "explain", "--sub", "alice", "--obj", "account:1001", "--act", "view_account", "--policy", broken); code != 2 {
		t.Fatalf("explain on a broken policy: exit %d, want 2", code)
	}
	// A valid model outside the index's families (an ABAC condition) loads,
	// and check says casbin's own Enforce decides it.
	abac := filepath.Join(t.TempDir(), "abac.conf")
	if err := os.WriteFile(abac, []byte(strings.Replace(mustRead(t, "../../model.conf"), "&& r.act == p.act",
		`&& r.act == p.act || r.act == "view_account" && r.obj == "account:" + r.sub`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ = runCmd(env, "policy", "check", "--model", abac)
	if code != 0 || !strings.Contains(out, "decider: casbin (slower: ") || !strings.Contains(out, "is not one the index decides") {
		t.Fatalf("check of an ABAC model: exit %d %q", code, out)
	}
	code, out, _ = runCmd(env, "policy", "explain", "--model", abac, "--sub", "zoe", "--obj", "account:zoe", "--act", "view_account")
	if code != 0 || !strings.Contains(out, "decided by casbin's Enforce") {
		t.Fatalf("explain on the ABAC model: exit %d %q", code, out)
	}
	code, out, _ = runCmd(env, "policy", "check")
	if !strings.Contains(out, "decider: index (role hierarchy (g), resource groups (g), wildcard objects (keyMatch))") {
		t.Fatalf("check of the shipped model: exit %d %q", code, out)
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestPolicyToolsForOps(t *testing.T) {
	env := settingsFrom(map[string]string{"FACADE_MODEL": "../../model.conf", "FACADE_POLICY": "../../policy.csv"})
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	pass := write("pass.txt", "# expectations\nallow alice account:1001 view_account\ndeny mallory account:1001 view_account\nallow bob+role:professor student:alice update\n"+
		"allow zed+group:english-graders+role:professor student:henry view\ndeny zed+role:professor student:henry view\n"+
		"deny bob student:alice update\n")
	if code, out, _ := runCmd(env, "policy", "test", pass); code != 0 || !strings.Contains(out, "6 cases, 0 mismatches") {
		t.Fatalf("policy test (passing): exit %d %q", code, out)
	}
	if code, _, stderr := runCmd(env, "policy", "test", write("bad.txt", "allow zed+devs student:henry view\n")); code != 2 || !strings.Contains(stderr, "bad.txt:1: ") {
		t.Fatalf("policy test with a group not written group:NAME: exit %d %q", code, stderr)
	}
	// A principal's token groups: --group names them as the token does.
	code, out, _ := runCmd(env, "policy", "explain", "--sub", "zed", "--role", "professor", "--group", "english-graders", "--obj", "class:english-101", "--act", "view")
	if code != 0 || !strings.Contains(out, "(token groups) zed is a member of group:english-graders") || !strings.Contains(out, "p, group:english-graders, class:english-101, view") {
		t.Fatalf("explain with --group: exit %d %q", code, out)
	}
	if code, _, _ := runCmd(env, "policy", "explain", "--sub", "zed", "--obj", "class:english-101", "--act", "view"); code != 1 {
		t.Fatalf("explain without the group: exit %d, want 1 (deny)", code)
	}
	if code, _, _ := runCmd(env, "policy", "explain", "--sub", "zed", "--group", "a\tb", "--obj", "class:english-101", "--act", "view"); code != 2 {
		t.Fatalf("explain with --group a<TAB>b: exit %d, want 2", code)
	}
	if code, out, _ := runCmd(env, "policy", "what", "--sub", "zed", "--role", "professor", "--group", "english-graders"); code != 0 || !strings.Contains(out, "student:henry view\n") {
		t.Fatalf("what with --group: exit %d %q", code, out)
	}
	if code, out, _ := runCmd(env, "policy", "who", "--obj", "student:henry", "--act", "view", "--role", "professor", "--group", "english-graders"); code != 0 || !strings.Contains(out, "principal alice\n") {
		t.Fatalf("who with --group (every principal asked as carrying it): exit %d %q", code, out)
	}
	fail := write("fail.txt", "allow mallory account:1001 view_account\ndeny dev project:PROJ view\n")
	code, out, _ = runCmd(env, "policy", "test", fail)
	if code != 1 || !strings.Contains(out, fail+":1: want allow, got deny") || !strings.Contains(out, fail+":2: want deny, got allow") ||
		!strings.Contains(out, "g, team:developers, team:platform") {
		t.Fatalf("policy test (failing): exit %d %q", code, out)
	}
	code, out, _ = runCmd(env, "policy", "who", "--obj", "project:PROJ", "--act", "view")
	for _, want := range []string{"principal carol\n", "principal dev\n", "principal ops\n", "group team:platform\n", "group team:developers\n"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Fatalf("who: exit %d, missing %q in %q", code, want, out)
		}
	}
	if strings.Contains(out, "alice") {
		t.Fatalf("who lists alice: %q", out)
	}
	code, out, _ = runCmd(env, "policy", "what", "--sub", "bob", "--role", "professor")
	for _, want := range []string{"account:2002 view_account\n", "class:english-101 update\n", "student:alice update\n", "student:henry view\n"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Fatalf("what: exit %d, missing %q in %q", code, want, out)
		}
	}
	if strings.Contains(out, "student:dave") {
		t.Fatalf("what: bob reaches dave, who is not in his class: %q", out)
	}
	old, err := os.ReadFile("../../policy.csv")
	if err != nil {
		t.Fatal(err)
	}
	newPolicy := write("new.csv", strings.Replace(string(old), "g, carol, team:platform\n", "", 1)+"p, mallory, account:1001, view_account\n")
	code, out, _ = runCmd(env, "policy", "diff", "--old", "../../policy.csv", "--new", newPolicy)
	if code != 1 || !strings.Contains(out, "- allow carol project:PROJ view\n") || !strings.Contains(out, "+ allow mallory account:1001 view_account\n") {
		t.Fatalf("diff: exit %d %q", code, out)
	}
	if code, out, _ = runCmd(env, "policy", "diff", "--old", "../../policy.csv", "--new", "../../policy.csv"); code != 0 || !strings.Contains(out, "no decision changes") {
		t.Fatalf("diff of identical files: exit %d %q", code, out)
	}
}

func redisFromURL(t *testing.T, url string) *redis.Client {
	t.Helper()
	opts, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opts)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// freeAddr returns a loopback address nobody listens on, for a command
// that binds it itself later. It is taken below Linux's ephemeral range
// (32768-60999): a port the kernel handed out for ":0" and that was closed
// again can be handed out once more to the next ":0" listener, such as
// the demo's own store, upstream or identity provider, started before
// the demo binds its address; a port below the range never is.
func freeAddr(t *testing.T) string {
	t.Helper()
	for range 200 {
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", 20000+rand.IntN(12000)))
		if err != nil {
			continue
		}
		addr := l.Addr().String()
		l.Close()
		return addr
	}
	t.Fatal("no free loopback port between 20000 and 32000")
	return ""
}

func TestPublicURLIsAWriteOrigin(t *testing.T) {
	got := withPublicOrigin([]string{"https://app.example"}, "https://facade.example:8443/api")
	if len(got) != 2 || got[1] != "https://facade.example:8443" {
		t.Fatalf("write origins %v", got)
	}
	if got := withPublicOrigin(nil, ""); len(got) != 0 {
		t.Fatalf("no public URL: %v", got)
	}
}

// TestServeEndToEnd runs `facade serve` on a real Redis and a
// Bamboo-compatible upstream, its secrets read from files, warns about missing AOF, serves, and on
// shutdown lets an in-flight request finish.
func TestServeEndToEnd(t *testing.T) {
	bt, upstreamTS := bambootest.NewTestServer(t, bambootest.WithToken("svc-token"))
	bambootest.DemoData(bt)
	addr := freeAddr(t)
	// The secrets come from files, as Kubernetes and Docker mount them
	// (docs/settings.md): nothing secret is in the environment.
	secrets, redisURL := t.TempDir(), testredis.URL(t)
	secretFile := func(name, value string) string {
		p := filepath.Join(secrets, name)
		if err := os.WriteFile(p, []byte(value+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	env := settingsFrom(map[string]string{
		"FACADE_REDIS_URL_FILE": secretFile("redis-url", redisURL), "FACADE_ADDR": addr,
		"FACADE_JWT_SECRET_FILE": secretFile("jwt-secret", secret),
		"FACADE_UPSTREAM_URL":    upstreamTS.URL, "FACADE_UPSTREAM_TOKEN_FILE": secretFile("upstream-token", "svc-token"),
		"FACADE_MODEL": "../../model.conf", "FACADE_POLICY": "../../policy.csv",
		// The /readyz check below must land inside the drain delay, and the
		// in-flight request must outlast it (upstream delay 5 s): seconds,
		// not a few hundred ms, so a loaded machine's pauses fit in both.
		"FACADE_DRAIN_DELAY": "3s",
		// Usage is written by the flush after the drain, not by the timer.
		"FACADE_POLICY_USAGE_FLUSH": "1h",
	})
	var logs testlog.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- cmdServe(ctx, nil, env, io.Discard, &logs) }()
	base := "http://" + addr
	waitHealthy(t, base, &logs)
	if !strings.Contains(logs.String(), "without AOF") {
		t.Errorf("no AOF warning against a Redis without persistence:\n%s", logs.String())
	}
	carol, _ := auth.Mint([]byte(secret), "carol", "developer", auth.Claims{}, time.Hour)

	// A slow upstream keeps this request in flight while shutdown begins.
	bt.SetDelay(5 * time.Second)
	result := make(chan int, 1)
	go func() {
		r, _ := http.NewRequest("GET", base+"/rest/api/latest/project?expand=projects.project.plans", nil)
		r.Header.Set("Authorization", "Bearer "+carol)
		res, err := http.DefaultClient.Do(r)
		if err != nil {
			result <- 0
			return
		}
		res.Body.Close()
		result <- res.StatusCode
	}()
	for bt.CallCount("/rest/api/latest/project") == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	// During the drain delay the instance still accepts, and says it is
	// leaving so a load balancer stops sending.
	for !strings.Contains(logs.String(), `"msg":"drain started"`) {
		time.Sleep(5 * time.Millisecond)
	}
	res, err := http.Get(base + "/readyz")
	if err != nil {
		t.Fatalf("not accepting during the drain delay: %v", err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 503 || !strings.Contains(string(body), `"status":"draining"`) {
		t.Errorf("/readyz while draining: %d %s", res.StatusCode, body)
	}
	if got := <-result; got != 200 {
		t.Fatalf("in-flight request during shutdown: %d", got)
	}
	if err := <-done; err != nil {
		t.Fatalf("serve returned %v", err)
	}
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Fatal("still listening after shutdown")
	}
	if !strings.Contains(logs.String(), `"msg":"drain finished"`) || !strings.Contains(logs.String(), `"complete":true`) {
		t.Errorf("drain end not logged:\n%s", logs.String())
	}
	// The policy lines carol's listing went through were written on the
	// way out (docs/policy.md, "Which lines are used").
	usage, err := grantusage.ReadUsage(context.Background(), redisFromURL(t, redisURL), time.Now(), time.Hour)
	if err != nil || usage.Uses["g, carol, team:platform"] == 0 {
		t.Errorf("after a graceful stop, carol's membership has no recorded use (%v): %v", err, usage)
	}
}

// TestPolicyReport: the access review of issue 20 through the command:
// CSV and JSON, one subject, a wildcard grant named as its pattern with
// the deny line that takes part of it back, a literal grant a deny line
// takes back left out, and the exit codes (0 ok, 1 failed, 2 usage).
func TestPolicyReport(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "model.conf")
	policy := filepath.Join(dir, "policy.csv")
	deny := strings.Replace(strings.Replace(mustRead(t, "../../model.conf"), "p = sub, obj, act\n", "p = sub, obj, act, eft\n", 1),
		"e = some(where (p.eft == allow))\n", "e = some(where (p.eft == allow)) && !some(where (p.eft == deny))\n", 1)
	if err := os.WriteFile(model, []byte(deny), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(policy, []byte("p, team:web, plan:WEB-*, view, allow\np, team:web, project:WEB, view, allow\n"+
		"p, mallory, plan:WEB-SECRET, view, deny\np, mallory, project:WEB, view, deny\ng, mallory, team:web\ng, wendy, team:web\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := settingsFrom(map[string]string{"FACADE_MODEL": model, "FACADE_POLICY": policy})
	code, out, _ := runCmd(env, "policy", "report")
	for _, want := range []string{
		"subject,kind,object,action,granted_by,except,last_used\n",
		"mallory,principal,plan:WEB-*,view,\"" + policy + ":1: p, team:web, plan:WEB-*, view, allow\",\"" + policy + ":3: p, mallory, plan:WEB-SECRET, view, deny\",\n",
		"wendy,principal,project:WEB,view,\"" + policy + ":2: p, team:web, project:WEB, view, allow\",,\n",
		"team:web,group,plan:WEB-*,view,",
	} {
		if code != 0 || !strings.Contains(out, want) {
			t.Fatalf("report: exit %d, missing %q in\n%s", code, want, out)
		}
	}
	if strings.Contains(out, "mallory,principal,project:WEB,") {
		t.Fatalf("report lists a grant a deny line takes back:\n%s", out)
	}
	code, out, _ = runCmd(env, "policy", "report", "--format", "json", "--subject", "wendy")
	var grants []struct {
		Subject   string   `json:"subject"`
		Object    string   `json:"object"`
		GrantedBy []string `json:"granted_by"`
	}
	if err := json.Unmarshal([]byte(out), &grants); code != 0 || err != nil || len(grants) != 2 || grants[0].Subject != "wendy" || len(grants[0].GrantedBy) != 1 {
		t.Fatalf("report --format json --subject wendy: exit %d %v %q", code, err, out)
	}
	if code, _, _ := runCmd(env, "policy", "report", "--format", "xml"); code != 2 {
		t.Fatalf("--format xml: exit %d, want 2", code)
	}
	if code, out, _ := runCmd(env, "policy", "report", "--help"); code != 0 || !strings.Contains(out, "--subject") {
		t.Fatalf("--help: exit %d %q", code, out)
	}
	if code, _, stderr := runCmd(env, "policy", "report", "--policy", filepath.Join(dir, "missing.csv")); code != 1 || stderr == "" {
		t.Fatalf("a policy that does not load: exit %d %q", code, stderr)
	}
}

// mustAccountID is a well-formed account id, parsed as the seed loader
// parses one.
func mustAccountID(s string) facade.AccountID {
	id, err := facade.ParseAccountID(s)
	if err != nil {
		panic(s + ": " + err.Error())
	}
	return id
}

// mustStudentID is a well-formed student id, parsed as the seed loader
// parses one.
func mustStudentID(s string) facade.StudentID {
	id, err := facade.ParseStudentID(s)
	if err != nil {
		panic(s + ": " + err.Error())
	}
	return id
}

// mustGrade is a grade of the scale, parsed as the seed loader parses one.
func mustGrade(s string) grades.Grade {
	g, err := grades.ParseGrade(s)
	if err != nil {
		panic(s + ": " + err.Error())
	}
	return g
}

// mustProjectKey is a well-formed project key.
func mustProjectKey(s string) facade.ProjectKey {
	k, err := facade.ParseProjectKey(s)
	if err != nil {
		panic(s + ": " + err.Error())
	}
	return k
}

// TestSeedLogsACountNotALinePerGrade: seeding a lecture writes one line
// with the counts to the log (stderr), not an audit line per grade (2,900
// of them for a lecture, issue 42); each grade's own trail is in Redis.
func TestSeedLogsACountNotALinePerGrade(t *testing.T) {
	url := testredis.URL(t)
	env := settingsFrom(map[string]string{"FACADE_REDIS_URL": url})
	var entries []string
	for i := range 120 {
		entries = append(entries, fmt.Sprintf(`{"student_id": "s%03d", "subject": "english", "grade": "B"}`, i))
	}
	file := filepath.Join(t.TempDir(), "seed.json")
	if err := os.WriteFile(file, []byte(`{"grades": [`+strings.Join(entries, ",")+`]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := runCmd(env, "seed", "--file", file)
	if code != 0 || !strings.Contains(out, "120 of 120 grades") {
		t.Fatalf("seed: %d %q %q", code, out, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], `"grades_created":120`) || !strings.Contains(lines[0], `"audit":true`) {
		t.Fatalf("the log has %d lines, want one with the count:\n%s", len(lines), stderr)
	}
}
