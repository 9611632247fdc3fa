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

	"github.com/facade-dev/facade/internal/testkit/parked"
	"github.com/facade-dev/facade/internal/testkit/testredis"
)

// pipelineGate counts the pipelines that run GET and holds the first one
// until released, so that callers pile up behind it. (go-redis sends its
// own pipelines too, to set up a connection.)
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
		if cmds[0].Name() != "get" {
			return next(ctx, cmds)
		}
		if g.pipelines.Add(1) == 1 {
			<-g.release
		}
		return next(ctx, cmds)
	}
}

// Callers that arrive while a batch is in flight go out together in the
// next pipeline: concurrent reads of different keys share one, and each
// caller reads its own key's value.
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
	waitFor(t, func() bool { return parked.In(combinerDo) == callers-1 })
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
			var cmd *redis.StringCmd
			b.Do(context.Background(), func(p redis.Pipeliner) { cmd = p.Get(context.Background(), "k") })
			if err := cmd.Err(); !IsUnavailable(err) {
				t.Errorf("caller %d: %v; want unavailable", i, err)
			}
		})
	}
	wg.Wait()
}

// combinerDo is where a caller waits for its batch (package parked).
const combinerDo = "redisdb.(*Combiner[...]).Do"

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
