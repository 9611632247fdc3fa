// Package testredis starts real redis-server processes for tests: one shared
// server per test binary (each caller gets its own logical database), or a
// private one that a fault test may stop and restart.
//
// Tests never talk to a Redis they did not start, and never to a mock.
package testredis

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Options configure a private server.
type Options struct {
	AOF bool // appendonly yes, fsync always: what money needs
}

// Server is one redis-server process on a loopback port.
type Server struct {
	Addr string
	dir  string
	opts Options
	// extraArgs follow the standard arguments on every launch (a later
	// redis-server argument overrides an earlier one); cluster nodes use it.
	extraArgs []string
	mu        sync.Mutex
	cmd       *exec.Cmd
	exited    chan struct{} // closed once cmd has exited
}

// Start launches a private redis-server and stops it when the test ends.
func Start(tb testing.TB, opts Options) *Server {
	tb.Helper()
	s, err := start(tb.TempDir(), opts)
	if err != nil {
		tb.Fatalf("testredis: %v", err)
	}
	tb.Cleanup(s.Stop)
	return s
}

func start(dir string, opts Options) (*Server, error) {
	var err error
	for range launchAttempts {
		var port int
		if port, err = freePort(); err != nil {
			return nil, err
		}
		s := &Server{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), dir: dir, opts: opts}
		if err = s.launch(); err == nil {
			return s, nil
		}
		s.Stop()
	}
	return nil, err
}

func (s *Server) launch() error {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return fmt.Errorf("redis-server not found on PATH (install Debian's redis-server): %w", err)
	}
	_, port, _ := net.SplitHostPort(s.Addr)
	args := []string{
		"--port", port, "--bind", "127.0.0.1", "--dir", s.dir,
		"--save", "", "--databases", "10000", "--protected-mode", "no",
		"--logfile", filepath.Join(s.dir, "redis.log"),
	}
	if s.opts.AOF {
		args = append(args, "--appendonly", "yes", "--appendfsync", "always")
	} else {
		args = append(args, "--appendonly", "no")
	}
	args = append(args, s.extraArgs...)
	cmd := exec.Command(bin, args...)
	// The server dies with the test binary even if cleanup never runs.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	s.mu.Lock()
	s.cmd, s.exited = cmd, exited
	s.mu.Unlock()
	return s.waitReady(cmd.Process.Pid, exited)
}

// readyWithin bounds a redis-server's start: generous, because a loaded
// machine (CI shares two cores) may take seconds to start one.
const readyWithin = 60 * time.Second

// waitReady waits until the redis-server with process id pid answers on
// s.Addr. It fails at once when the process exits (its port was taken
// between freePort and the bind), and does not mistake another process's
// redis-server that won that port for this one: it checks the process id.
func (s *Server) waitReady(pid int, exited <-chan struct{}) error {
	c := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1})
	defer c.Close()
	want := "process_id:" + strconv.Itoa(pid)
	for deadline := time.Now().Add(readyWithin); time.Now().Before(deadline); {
		if info, err := c.Info(context.Background(), "server").Result(); err == nil {
			for _, line := range strings.Split(info, "\n") {
				if strings.TrimSpace(line) == want {
					return nil
				}
			}
			return fmt.Errorf("another redis-server answers on %s", s.Addr)
		}
		select {
		case <-exited:
			return fmt.Errorf("redis-server on %s exited before it was ready (see %s)", s.Addr, filepath.Join(s.dir, "redis.log"))
		case <-time.After(10 * time.Millisecond):
		}
	}
	return fmt.Errorf("redis-server on %s did not become ready within %s", s.Addr, readyWithin)
}

// Stop kills the server (as a crash would) and waits for it to exit.
func (s *Server) Stop() {
	s.mu.Lock()
	cmd, exited := s.cmd, s.exited
	s.cmd, s.exited = nil, nil
	s.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return
	}
	_ = cmd.Process.Kill()
	<-exited
}

// Dir is the server's data directory (its AOF lives under it).
func (s *Server) Dir() string { return s.dir }

// Restart starts the server again on the same port and data directory, so
// with AOF on it comes back with its data.
func (s *Server) Restart() error {
	s.Stop()
	return s.launch()
}

// Client returns a client for database 0 of s, closed when the test ends.
func (s *Server) Client(tb testing.TB) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: s.Addr})
	tb.Cleanup(func() { _ = c.Close() })
	return c
}

var (
	sharedOnce sync.Once
	shared     *Server
	sharedErr  error
	nextDB     atomic.Int64
)

// Client returns a client on a fresh, empty logical database of the
// package's shared redis-server, which is started on first use.
func Client(tb testing.TB) *redis.Client {
	tb.Helper()
	addr := Addr(tb)
	db := int(nextDB.Add(1)) // 1..9999; 0 stays unused
	c := redis.NewClient(&redis.Options{Addr: addr, DB: db})
	if err := c.FlushDB(context.Background()).Err(); err != nil {
		tb.Fatalf("testredis: flush db %d: %v", db, err)
	}
	tb.Cleanup(func() { _ = c.Close() })
	return c
}

// URL returns a redis:// URL for a fresh database of the shared server.
func URL(tb testing.TB) string {
	tb.Helper()
	c := Client(tb)
	return fmt.Sprintf("redis://%s/%d", c.Options().Addr, c.Options().DB)
}

// Addr returns the shared server's address, starting it if needed.
func Addr(tb testing.TB) string {
	tb.Helper()
	sharedOnce.Do(func() {
		dir, err := os.MkdirTemp("", "testredis-")
		if err != nil {
			sharedErr = err
			return
		}
		shared, sharedErr = start(dir, Options{})
	})
	if sharedErr != nil {
		tb.Fatalf("testredis: %v", sharedErr)
	}
	return shared.Addr
}

// Main runs the package's tests and then stops the shared server. Use it
// from TestMain: func TestMain(m *testing.M) { testredis.Main(m) }.
func Main(m *testing.M) { os.Exit(Run(m)) }

// Run is Main for a TestMain that checks more after the tests: it runs
// them, stops the shared server and returns the exit code.
func Run(m *testing.M) int {
	code := m.Run()
	if shared != nil {
		shared.Stop()
		_ = os.RemoveAll(shared.dir)
	}
	return code
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
