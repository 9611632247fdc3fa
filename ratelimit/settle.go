package ratelimit

import (
	"context"
	"errors"
	"hash/fnv"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Settlement: every Interval, one pipeline adds what this instance
// admitted since the last one and reads back every bucket as all instances
// left it (the package comment says why and how far N instances can
// overshoot meanwhile).

// startSettling starts the settlement loop if it is not running. l.mu held.
func (l *Limiter) startSettling() {
	if l.settling {
		return
	}
	l.settling = true
	go l.settleLoop()
}

// settleLoop settles every Interval until the local table is empty.
func (l *Limiter) settleLoop() {
	t := time.NewTicker(l.interval)
	defer t.Stop()
	for range t.C {
		if !l.settle(context.Background()) {
			return
		}
	}
}

// settle sends one pipeline: for every local bucket, what this instance
// admitted since the last settlement; and reads back each bucket as every
// instance left it. It reports whether the loop should go on.
func (l *Limiter) settle(ctx context.Context) bool {
	keys, sent := l.snapshot()
	if len(keys) == 0 {
		return l.stopIfEmpty()
	}
	ctx, cancel := context.WithTimeout(ctx, 5*l.interval+time.Second)
	defer cancel()
	// Redis's answers are "ahead of now" at some moment during the call;
	// counting from its start errs towards admitting (by at most the
	// call's duration), where counting from its end would lose that much
	// of the rate at every settlement.
	sentAt := l.now()
	aheads, err := l.pipeline(ctx, keys, sent)
	if err != nil {
		// Keep today's behaviour with Redis down: forget the local view,
		// so requests go to ask(), which lets them through, counted in
		// the outage this failure starts.
		l.outage.Failed(ctx, err)
		l.mu.Lock()
		clear(l.buckets)
		l.mu.Unlock()
		return l.stopIfEmpty()
	}
	l.outage.OK(ctx)
	l.mu.Lock()
	for i, key := range keys {
		b := l.buckets[key]
		if b == nil {
			continue
		}
		ahead := time.Duration(aheads[i]) * time.Microsecond
		// Redis has everything up to the snapshot; admissions made here
		// since then are still pending and go on top.
		b.tat = sentAt.Add(ahead).Add(time.Duration(b.pending) * l.emission)
	}
	l.mu.Unlock()
	return true
}

// snapshot takes the pending counts of every bucket (resetting them) and
// drops buckets idle for idleIntervals with nothing to send.
func (l *Limiter) snapshot() (keys []string, sent []int) {
	now := l.now()
	idle := time.Duration(idleIntervals) * l.interval
	l.mu.Lock()
	defer l.mu.Unlock()
	keys = make([]string, 0, len(l.buckets))
	sent = make([]int, 0, len(l.buckets))
	for key, b := range l.buckets {
		if b.pending == 0 && now.Sub(b.lastUsed) > idle {
			delete(l.buckets, key)
			continue
		}
		keys = append(keys, key)
		sent = append(sent, b.pending)
		b.pending = 0
	}
	return keys, sent
}

// settleGroups is how many hash tags the buckets are spread over: how
// many script calls settle them all (more only past maxSettleKeys keys in
// a group). In Redis Cluster the groups are as many slots, spread over the
// shards; one group would put every bucket on one shard.
const settleGroups = 16

// maxSettleKeys bounds one settlement call, so that a large table cannot
// hold Redis in one script for long.
const maxSettleKeys = 500

// BucketKey is the Redis key of key's bucket under prefix:
// prefix{g}:key, g being key's group (0..settleGroups-1), so that one
// script call can settle a whole group, also in Redis Cluster.
func BucketKey(prefix, key string) string {
	return prefix + "{" + strconv.Itoa(group(key)) + "}:" + key
}

func group(key string) int {
	h := fnv.New32a()
	h.Write([]byte(key))
	return int(h.Sum32() % settleGroups)
}

// pipeline settles the buckets of keys (sent[i] admitted here on keys[i])
// in one pipeline of one script call per group, and returns how far each
// bucket runs ahead of Redis's clock, in microseconds, in keys' order.
func (l *Limiter) pipeline(ctx context.Context, keys []string, sent []int) ([]int64, error) {
	calls := settleCalls(keys)
	run := func() ([]*redis.Cmd, error) {
		cmds := make([]*redis.Cmd, len(calls))
		_, err := l.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for c, idx := range calls {
				rkeys := make([]string, len(idx))
				args := make([]any, 1+len(idx))
				args[0] = l.emission.Microseconds()
				for j, i := range idx {
					rkeys[j], args[1+j] = BucketKey(l.prefix, keys[i]), sent[i]
				}
				cmds[c] = p.EvalSha(ctx, settleScript.Hash(), rkeys, args...)
			}
			return nil
		})
		return cmds, err
	}
	cmds, err := run()
	if err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
		if err = settleScript.Load(ctx, l.rdb).Err(); err == nil {
			cmds, err = run()
		}
	}
	if err != nil {
		return nil, err
	}
	aheads := make([]int64, len(keys))
	for c, idx := range calls {
		v, err := cmds[c].Int64Slice()
		if err != nil || len(v) != len(idx) {
			return nil, errors.New("ratelimit: unexpected settlement reply")
		}
		for j, i := range idx {
			aheads[i] = v[j]
		}
	}
	return aheads, nil
}

// settleCalls splits the keys into script calls: the indexes of keys of
// one group, at most maxSettleKeys a call.
func settleCalls(keys []string) [][]int {
	var groups [settleGroups][]int
	for i, k := range keys {
		g := group(k)
		groups[g] = append(groups[g], i)
	}
	var calls [][]int
	for _, idx := range groups {
		for len(idx) > 0 {
			n := min(len(idx), maxSettleKeys)
			calls = append(calls, idx[:n])
			idx = idx[n:]
		}
	}
	return calls
}

func (l *Limiter) stopIfEmpty() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.buckets) == 0 {
		l.settling = false
		return false
	}
	return true
}
