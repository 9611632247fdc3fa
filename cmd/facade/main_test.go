package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/facade-dev/facade/accounts"
	"github.com/facade-dev/facade/grades"
	"github.com/facade-dev/facade/internal/testredis"
	"github.com/facade-dev/facade/server"
	"github.com/facade-dev/facade/upstream/bambootest"
)

func TestMain(m *testing.M) { testredis.Main(m) }

const secret = "cmd-test-secret-that-is-32-bytes-or-more"

// withEnv makes getenv read vars for the rest of the test.
func withEnv(t *testing.T, vars map[string]string) {
	t.Helper()
	old := getenv
	getenv = func(k string) string { return vars[k] }
	t.Cleanup(func() { getenv = old })
}

func runCmd(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestServeNamesMissingSettings(t *testing.T) {
	cases := []struct {
		vars map[string]string
		want string
	}{
		{map[string]string{}, "FACADE_REDIS_URL"},
		{map[string]string{"FACADE_REDIS_URL": "redis://127.0.0.1:1/0"}, "FACADE_JWT_SECRET"},
		{map[string]string{"FACADE_REDIS_URL": "redis://127.0.0.1:1/0", "FACADE_JWT_SECRET": "short"}, "FACADE_JWT_SECRET"},
		{map[string]string{"FACADE_REDIS_URL": "mysql://x", "FACADE_JWT_SECRET": secret}, "FACADE_REDIS_URL"},
		{map[string]string{"FACADE_REDIS_URL": "redis://127.0.0.1:1/0", "FACADE_JWT_SECRET": secret, "FACADE_CORS_WRITE_ORIGINS": "*"}, "FACADE_CORS_WRITE_ORIGINS"},
		{map[string]string{"FACADE_REDIS_URL": "redis://127.0.0.1:1/0", "FACADE_JWT_SECRET": secret, "FACADE_CACHE_TTL": "soon"}, "FACADE_CACHE_TTL"},
		{map[string]string{"FACADE_REDIS_URL": "redis://127.0.0.1:1/0", "FACADE_JWT_SECRET": secret, "FACADE_CACHE_TTL": "0s"}, "FACADE_CACHE_TTL"},
		{map[string]string{"FACADE_REDIS_URL": "redis://127.0.0.1:1/0", "FACADE_JWT_SECRET": secret, "FACADE_UPSTREAM_TIMEOUT": "0"}, "FACADE_UPSTREAM_TIMEOUT"},
		{map[string]string{"FACADE_REDIS_URL": "redis://127.0.0.1:1/0", "FACADE_JWT_SECRET": secret, "FACADE_MAX_TRANSFER": "-1"}, "FACADE_MAX_TRANSFER"},
		{map[string]string{"FACADE_REDIS_URL": "redis://127.0.0.1:1/0", "FACADE_JWT_SECRET": secret, "FACADE_POLICY": "/nonexistent/policy.csv", "FACADE_MODEL": "../../model.conf"}, "FACADE_POLICY"},
	}
	for _, c := range cases {
		withEnv(t, c.vars)
		code, _, stderr := runCmd("serve")
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		if code != 1 || len(lines) != 1 || !strings.Contains(lines[0], c.want) {
			t.Errorf("env %v: exit %d, stderr %q; want one line naming %s", c.vars, code, stderr, c.want)
		}
	}
}

func TestTokenCommand(t *testing.T) {
	withEnv(t, map[string]string{"FACADE_JWT_SECRET": secret})
	code, out, stderr := runCmd("token", "--sub", "alice", "--role", "student", "--ttl", "5m")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	auth, err := server.NewAuthenticator(context.Background(), server.AuthConfig{Secret: []byte(secret)})
	if err != nil {
		t.Fatal(err)
	}
	p, err := auth.Principal(context.Background(), strings.TrimSpace(out))
	if err != nil || p.ID != "alice" || p.Role != "student" {
		t.Fatalf("minted token: %+v %v", p, err)
	}
	if code, _, _ := runCmd("token", "--role", "student"); code == 0 {
		t.Fatal("token without --sub succeeded")
	}
	withEnv(t, map[string]string{})
	if code, _, stderr := runCmd("token", "--sub", "a"); code == 0 || !strings.Contains(stderr, "FACADE_JWT_SECRET") {
		t.Fatalf("token without secret: %d %q", code, stderr)
	}
}

func TestSeedCommand(t *testing.T) {
	url := testredis.URL(t)
	withEnv(t, map[string]string{"FACADE_REDIS_URL": url})
	file := filepath.Join(t.TempDir(), "seed.json")
	write := func(body string) {
		if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"accounts": [{"id": "1001", "owner": "alice", "currency": "EUR", "balance": "250.00"}],
	        "grades":   [{"student_id": "alice", "subject": "english", "grade": "B+"}]}`)
	if code, out, stderr := runCmd("seed", "--file", file); code != 0 || !strings.Contains(out, "1 of 1 accounts") {
		t.Fatalf("seed: %d %q %q", code, out, stderr)
	}
	// A second seed with another balance never overwrites the first.
	write(`{"accounts": [{"id": "1001", "owner": "alice", "currency": "EUR", "balance": "9999.00"}], "grades": []}`)
	if code, out, _ := runCmd("seed", "--file", file); code != 0 || !strings.Contains(out, "0 of 1 accounts") {
		t.Fatalf("reseed: %d %q", code, out)
	}
	rdb := redisFromURL(t, url)
	a, err := accounts.NewStore(rdb, nil).Get(context.Background(), "1001")
	if err != nil || a.BalanceAmount().String() != "250.00" {
		t.Fatalf("balance after reseed: %+v %v", a, err)
	}
	g, err := grades.NewStore(rdb, nil).Get(context.Background(), "alice", "english")
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
		if code, _, _ := runCmd("seed", "--file", file); code != 1 {
			t.Errorf("seed %s: exit %d, want 1", bad, code)
		}
	}
	// A file with an error anywhere writes nothing at all.
	if _, err := accounts.NewStore(rdb, nil).Get(context.Background(), "5005"); err == nil {
		t.Fatal("a rejected seed file still created account 5005")
	}
}

func TestPolicyCommands(t *testing.T) {
	withEnv(t, map[string]string{"FACADE_MODEL": "../../model.conf", "FACADE_POLICY": "../../policy.csv"})
	if code, out, stderr := runCmd("policy", "check"); code != 0 {
		t.Fatalf("repository policy: exit %d\n%s%s", code, out, stderr)
	}
	broken := filepath.Join(t.TempDir(), "policy.csv")
	if err := os.WriteFile(broken, []byte("p, bob, class:english-101, view\np, bob, class:english-101\ng, only-one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ := runCmd("policy", "check", "--policy", broken)
	if code != 1 || !strings.Contains(out, broken+":2") || !strings.Contains(out, broken+":3") {
		t.Fatalf("broken policy: exit %d\n%s", code, out)
	}
	code, out, _ = runCmd("policy", "explain", "--sub", "alice", "--role", "customer", "--obj", "account:1001", "--act", "view_account")
	if code != 0 || !strings.HasPrefix(out, "allow") || !strings.Contains(out, "account:1001") {
		t.Fatalf("explain allow: %d %q", code, out)
	}
	code, out, _ = runCmd("policy", "explain", "--sub", "mallory", "--role", "customer", "--obj", "account:1001", "--act", "view_account")
	if code != 0 || !strings.HasPrefix(out, "deny") {
		t.Fatalf("explain deny: %d %q", code, out)
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

// TestDemoServes starts `facade demo` and uses the tokens it prints.
func TestDemoServes(t *testing.T) {
	withEnv(t, map[string]string{"FACADE_ADDR": freeAddr(t), "FACADE_LOG_LEVEL": "error"})
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- cmdDemo(ctx, nil, pw, io.Discard); pw.Close() }()
	out := readUntil(t, pr, "Ctrl-C to stop")
	go io.Copy(io.Discard, pr)
	base := regexp.MustCompile(`API:\s+(\S+)`).FindStringSubmatch(out)[1]
	tokens := regexp.MustCompile(`(?m)^  export [A-Z]+=(eyJ\S+)$`).FindAllStringSubmatch(out, -1)
	if len(tokens) != 4 {
		t.Fatalf("demo printed %d tokens:\n%s", len(tokens), out)
	}
	student, professor, holder, developer := tokens[0][1], tokens[1][1], tokens[2][1], tokens[3][1]
	get := func(tok, path string) (int, string) {
		r, _ := http.NewRequest("GET", base+path, nil)
		r.Header.Set("Authorization", "Bearer "+tok)
		res, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	checks := []struct {
		tok, path string
		want      int
		contains  string
	}{
		{student, "/student/alice/english/grade", 200, `"grade":"B+"`},
		{student, "/student/dave/english/grade", 403, ""},
		{professor, "/student/alice/english/grade", 200, `"grade"`},
		{professor, "/student/dave/english/grade", 403, ""},
		{holder, "/rs/account/1001/balance", 200, `"balance":250.00`},
		{developer, "/rest/api/latest/project?expand=projects.project.plans", 200, `"PROJ"`},
		{developer, "/rs/account/1001/balance", 403, ""},
	}
	for _, c := range checks {
		if code, body := get(c.tok, c.path); code != c.want || !strings.Contains(body, c.contains) {
			t.Errorf("GET %s: %d %s", c.path, code, body)
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("demo ended with %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("demo did not stop on cancel")
	}
}

func readUntil(t *testing.T, r io.Reader, marker string) string {
	t.Helper()
	var buf bytes.Buffer
	b := make([]byte, 4096)
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(buf.String(), marker) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in output:\n%s", marker, buf.String())
		}
		n, err := r.Read(b)
		buf.Write(b[:n])
		if err != nil {
			t.Fatalf("output ended: %v\n%s", err, buf.String())
		}
	}
	return buf.String()
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
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
// Bamboo-compatible upstream, warns about missing AOF, serves, and on
// shutdown lets an in-flight request finish.
func TestServeEndToEnd(t *testing.T) {
	bt, upstreamTS := bambootest.NewTestServer(t, bambootest.WithToken("svc-token"))
	bambootest.DemoData(bt)
	addr := freeAddr(t)
	withEnv(t, map[string]string{
		"FACADE_REDIS_URL": testredis.URL(t), "FACADE_JWT_SECRET": secret, "FACADE_ADDR": addr,
		"FACADE_UPSTREAM_URL": upstreamTS.URL, "FACADE_UPSTREAM_TOKEN": "svc-token",
		"FACADE_MODEL": "../../model.conf", "FACADE_POLICY": "../../policy.csv",
	})
	var logs safeBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- cmdServe(ctx, nil, &logs) }()
	base := "http://" + addr
	deadline := time.Now().Add(10 * time.Second)
	for {
		res, err := http.Get(base + "/healthz")
		if err == nil && res.StatusCode == 200 {
			res.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not come up: %v\n%s", err, logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(logs.String(), "without AOF") {
		t.Errorf("no AOF warning against a Redis without persistence:\n%s", logs.String())
	}
	carol, _ := server.Mint([]byte(secret), "carol", "developer", "role", time.Hour)

	// A slow upstream keeps this request in flight while shutdown begins.
	bt.SetDelay(700 * time.Millisecond)
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
	if got := <-result; got != 200 {
		t.Fatalf("in-flight request during shutdown: %d", got)
	}
	if err := <-done; err != nil {
		t.Fatalf("serve returned %v", err)
	}
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Fatal("still listening after shutdown")
	}
}

type safeBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *safeBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *safeBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
