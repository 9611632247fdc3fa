package ratelimit

import (
	"context"
	"encoding/json"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/facade-dev/facade/internal/testkit/testlog"
	"github.com/facade-dev/facade/internal/testkit/testredis"
)

// TestRedisOutageIsLoggedOnceWithACount: while a real redis-server is
// stopped, requests go through unlimited and the limiter writes one line
// when the outage starts and one when Redis answers again, with how many
// requests went through meanwhile; never a line per request (it was 127
// lines for one outage).
func TestRedisOutageIsLoggedOnceWithACount(t *testing.T) {
	srv := testredis.Start(t, testredis.Options{})
	// No command or dial retries: each request of the outage fails at
	// once, not after the client's backoff.
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: -1, DialerRetries: 1})
	t.Cleanup(func() { _ = rdb.Close() })
	var logs testlog.Buffer
	l, err := New(rdb, "test:rl:", PerSecond(1000, 1000),
		Config{Interval: 20 * time.Millisecond, Log: slog.New(slog.NewJSONHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if ok, _, err := l.Allow(ctx, "before"); !ok || err != nil {
		t.Fatalf("with Redis up: ok %v err %v", ok, err)
	}
	srv.Stop()
	const during = 127
	for i := range during {
		if ok, _, err := l.Allow(ctx, "during-"+strconv.Itoa(i)); !ok || err == nil {
			t.Fatalf("request %d with Redis down: ok %v err %v; want allowed, with the error", i, ok, err)
		}
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	// The client may meet a connection of the stopped server first: those
	// requests went through unlimited too.
	allowed := during
	deadline := time.Now().Add(30 * time.Second)
	for i := 0; ; i++ {
		ok, _, err := l.Allow(ctx, "after-"+strconv.Itoa(i))
		if err == nil && ok {
			break
		}
		if !ok || time.Now().After(deadline) {
			t.Fatalf("after the restart: ok %v err %v", ok, err)
		}
		allowed++
	}
	var lines []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("not a JSON line: %q", line)
		}
		lines = append(lines, m)
	}
	if len(lines) != 2 {
		t.Fatalf("%d log lines for one outage, want 2 (its start and its end):\n%s", len(lines), logs.String())
	}
	start, end := lines[0], lines[1]
	if msg, _ := start["msg"].(string); !strings.HasPrefix(msg, "rate limiter unavailable") || start["err"] == nil || start["keys"] != "test:rl:" {
		t.Errorf("first line %v: want the outage's start with the error and the limiter's keys", start)
	}
	if msg, _ := end["msg"].(string); msg != "rate limiter available again" || end["allowed"] != float64(allowed) || end["down_ms"] == nil {
		t.Errorf("last line %v: want the outage's end with allowed %d and its duration", end, allowed)
	}
}
