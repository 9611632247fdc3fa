package redisdb

import (
	"context"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/facade-dev/facade/internal/testkit/testredis"
)

var echoScript = redis.NewScript(`redis.call('INCR', KEYS[1]); return ARGV[1]`)

// pipelineGate counts the pipelines that run the script (or GET) and holds the
// first one until released, so that callers pile up behind it. (go-redis
// sends its own pipelines too, to set up a connection.)
type pipelineGate struct {
	pipelines atomic.Int64
	release   chan struct{}
}

func (g *pipelineGate) DialHook(next redis.DialHook) redis.DialHook { return next }
func (g *pipelineGate) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return next
}
func (g *pipelineGate) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if name := cmds[0].Name(); name != "evalsha" && name != "eval" && name != "get" {
			return next(ctx, cmds)
		}
		if g.pipelines.Add(1) == 1 {
			<-g.release
		}
		return next(ctx, cmds)
	}
}

// Callers that arrive while a batch is in flight go out together in the
// next pipeline, and each still gets its own reply.
func TestConcurrentRunsShareOnePipelineAndKeepTheirOwnReplies(t *testing.T) {
	rdb := testredis.Client(t)
	gate := &pipelineGate{release: make(chan struct{})}
	rdb.AddHook(gate)
	b := NewBatcher(rdb, 1)

	const callers = 64
	replies := make([]string, callers)
	errs := make([]error, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			replies[i], errs[i] = b.RunScript(context.Background(), echoScript, []string{"counter"}, fmt.Sprint("caller-", i)).Text()
		})
	}
	// One caller is in the held pipeline; the rest must queue behind it.
	waitFor(t, func() bool { return b.combine.Queued() == callers-1 })
	close(gate.release)
	wg.Wait()

	for i := range callers {
		if errs[i] != nil || replies[i] != fmt.Sprint("caller-", i) {
			t.Fatalf("caller %d got %q, %v", i, replies[i], errs[i])
		}
	}
	if n, _ := rdb.Get(context.Background(), "counter").Int(); n != callers {
		t.Fatalf("the script ran %d times for %d callers", n, callers)
	}
	// The first pipeline (one caller, sent before the script was cached:
	// NOSCRIPT, then EVAL) and one for the other 63.
	if n := gate.pipelines.Load(); n > 3 {
		t.Fatalf("%d pipelines for %d callers; want the waiting callers batched", n, callers)
	}
}

// Plain commands batch the same way: concurrent reads of different keys
// share a pipeline and each caller reads its own key's value.
func TestConcurrentReadsShareOnePipelineAndKeepTheirOwnReplies(t *testing.T) {
	ctx := context.Background()
	rdb := testredis.Client(t)
	const callers = 32
	for i := range callers {
		if err := rdb.Set(ctx, fmt.Sprint("key-", i), fmt.Sprint("value-", i), 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	gate := &pipelineGate{release: make(chan struct{})}
	rdb.AddHook(gate)
	b := NewBatcher(rdb, 1)

	got := make([]string, callers)
	errs := make([]error, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			var cmd *redis.StringCmd
			b.Do(ctx, func(p redis.Pipeliner) { cmd = p.Get(ctx, fmt.Sprint("key-", i)) })
			got[i], errs[i] = cmd.Result()
		})
	}
	waitFor(t, func() bool { return b.combine.Queued() == callers-1 })
	close(gate.release)
	wg.Wait()
	for i := range callers {
		if errs[i] != nil || got[i] != fmt.Sprint("value-", i) {
			t.Fatalf("caller %d read %q, %v", i, got[i], errs[i])
		}
	}
	if n := gate.pipelines.Load(); n != 2 {
		t.Fatalf("%d pipelines for %d readers; want the held one and one for the rest", n, callers)
	}
}

// A server that lost its script cache (a restart, a new shard) still runs
// every call, once.
func TestRunsAfterTheScriptCacheIsFlushed(t *testing.T) {
	ctx := context.Background()
	rdb := testredis.Client(t)
	b := NewBatcher(rdb, 2)
	for round := range 2 {
		if err := rdb.ScriptFlush(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		if got, err := b.RunScript(ctx, echoScript, []string{"n"}, "x").Text(); err != nil || got != "x" {
			t.Fatalf("round %d: %q, %v", round, got, err)
		}
	}
	if n, _ := rdb.Get(ctx, "n").Int(); n != 2 {
		t.Fatalf("two calls ran the script %d times", n)
	}
}

// With Redis down every caller learns it, as "unavailable" (503).
func TestEveryCallerOfABatchLearnsRedisIsDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	down, err := Open(Config{URL: "redis://" + addr + "/0"})
	if err != nil {
		t.Fatal(err)
	}
	defer down.Close()
	b := NewBatcher(down, 1)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			if err := b.RunScript(context.Background(), echoScript, []string{"k"}, "v").Err(); !IsUnavailable(err) {
				t.Errorf("caller %d: %v; want unavailable", i, err)
			}
		})
	}
	wg.Wait()
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 30s")
		}
		time.Sleep(time.Millisecond)
	}
}
