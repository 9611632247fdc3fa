package monitoring

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/facade-dev/facade/internal/testkit/testredis"
	"github.com/facade-dev/facade/upstream/bambootest"
)

// The service under TestPrometheusScrapesTheService: the production
// binary, built from ../../cmd/facade, run as `facade serve` with a real
// redis-server and the Bamboo test server.
const (
	jwtSecret     = "monitoring-test-secret-0123456789-abcdefghijklmnop"
	upstreamToken = "monitoring-upstream-token"
)

type service struct {
	bin, api, ops string
	env           []string
	redis         *testredis.Server
	bamboo        *bambootest.Server
	logs          *lockedBuffer
}

// startService builds facade, seeds two accounts and a grade, and runs
// `facade serve` until the test ends.
func startService(t *testing.T) *service {
	t.Helper()
	s := &service{bin: buildFacade(t), api: freeAddr(t), ops: freeAddr(t), logs: &lockedBuffer{}}
	s.redis = testredis.Start(t, testredis.Options{})
	s.bamboo = bambootest.New(bambootest.WithToken(upstreamToken))
	bambootest.DemoData(s.bamboo)
	upstream := httptest.NewServer(s.bamboo)
	t.Cleanup(upstream.Close)
	s.bamboo.SetBaseURL(upstream.URL)
	root, _ := filepath.Abs("../..")
	s.env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(),
		"FACADE_REDIS_URL=redis://" + s.redis.Addr + "/0", "FACADE_JWT_SECRET=" + jwtSecret,
		"FACADE_ADDR=" + s.api, "FACADE_OPS_ADDR=" + s.ops, "FACADE_DRAIN_DELAY=0",
		"FACADE_UPSTREAM_URL=" + upstream.URL, "FACADE_UPSTREAM_TOKEN=" + upstreamToken,
		"FACADE_MODEL=" + filepath.Join(root, "model.conf"), "FACADE_POLICY=" + filepath.Join(root, "policy.csv"),
		"FACADE_POLICY_USAGE_FLUSH=1s"}
	seed := filepath.Join(t.TempDir(), "seed.json")
	writeFile(t, seed, `{"accounts": [{"id": "1001", "owner": "alice", "currency": "EUR", "balance": "250.00"},
		{"id": "2002", "owner": "bob", "currency": "EUR", "balance": "10.00"}],
		"grades": [{"student_id": "alice", "subject": "english", "grade": "B+"}]}`)
	s.run(t, "seed", "--file", seed)
	serve := exec.Command(s.bin, "serve")
	serve.Env, serve.Stdout, serve.Stderr = s.env, s.logs, s.logs
	startProcess(t, serve)
	waitOK(t, "http://"+s.ops+"/healthz", s.logs)
	return s
}

// buildFacade builds the production binary as the README does.
func buildFacade(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "facade")
	build := exec.Command("go", "build", "-o", bin, "./cmd/facade")
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/facade: %v\n%s", err, out)
	}
	return bin
}

// run runs a facade command with the service's settings and returns what
// it printed.
func (s *service) run(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(s.bin, args...)
	cmd.Env = s.env
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("facade %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out))
}

// call makes one API request as token and returns its status.
func (s *service) call(method, path, token string) int {
	r, _ := http.NewRequest(method, "http://"+s.api+path, nil)
	r.Header.Set("Authorization", "Bearer "+token)
	r.Header.Set("X-XSRF-TOKEN", "monitoring")
	if method == http.MethodPost {
		r.Header.Set("Idempotency-Key", fmt.Sprint(time.Now().UnixNano()))
	}
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		return 0
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode
}

// traffic is what the test drives, over and over until ctx ends: grade
// reads (one of them a denial), build reads through the cache (lists,
// results, an artifact), a transfer, a request to an unknown path, and
// one call Bamboo fails on every attempt (a 502), so every series a rule
// or panel selects has a sample.
func (s *service) traffic(ctx context.Context, t *testing.T) {
	alice, carol := s.run(t, "token", "--sub", "alice", "--role", "student"), s.run(t, "token", "--sub", "carol", "--role", "developer")
	s.bamboo.FailNext(3, http.StatusInternalServerError) // the first call's every attempt
	if got := s.call("GET", "/rest/api/latest/result/WEB-NIGHTLY", carol); got != http.StatusBadGateway {
		t.Errorf("a build read Bamboo failed on: %d, want 502", got)
	}
	go func() {
		for ctx.Err() == nil {
			s.call("GET", "/student/alice/english/grade", alice)
			s.call("GET", "/student/henry/english/grade", alice) // denied: 403
			s.call("GET", "/rest/api/latest/project?expand=projects.project.plans", carol)
			s.call("GET", "/rest/api/latest/result/WEB-NIGHTLY", carol)
			s.call("GET", "/rest/api/latest/result/PROJ-CORE/latest?expand=artifacts", carol)
			s.call("GET", "/browse/PROJ-CORE-6/artifact/shared/core-service.jar/", carol)
			s.call("POST", "/rs/transfer/from/1001/to/2002/amount/0.01", alice)
			s.call("GET", "/no/such/path", alice)
			select {
			case <-ctx.Done():
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
}

// startProcess starts cmd and, when the test ends, stops it (SIGTERM,
// then SIGKILL after 10 s) and waits for it.
func startProcess(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", cmd.Path, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
}

// waitOK waits until url answers 200, for a minute at most.
func waitOK(t *testing.T, url string, logs fmt.Stringer) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		res, err := http.Get(url)
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not answer 200: %v\n%s", url, err, logs)
		}
		time.Sleep(50 * time.Millisecond)
	}
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

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// lockedBuffer collects a process's output, safe to read while it runs.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
