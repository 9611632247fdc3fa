package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/facade-dev/facade/accounts"
	"github.com/facade-dev/facade/internal/testkit/testredis"
	"github.com/facade-dev/facade/redisdb"
)

// A Redis crash in the middle of a busy run, as HTTP callers live it: while
// Redis is down every transfer answers 503 with Retry-After and a fixed
// problem body (nothing else, no 500) and /readyz stays 200 saying Redis
// is unavailable (a shared Redis's blip must not take every instance out
// of the load balancer); once Redis is
// back the same server serves again by itself; callers who retry their
// failed requests with the same Idempotency-Key get each transfer done
// exactly once, whether its first reply was lost or not. At the end no cent
// is lost or made, no balance is negative, and the ledger holds one entry
// per transfer a caller was told of.
func TestFaultRedisCrashDuringTransfersOverHTTP(t *testing.T) {
	const workers, quota = 12, 12
	redisSrv := testredis.Start(t, testredis.Options{AOF: true})
	// Opened as `facade serve` opens it: fail fast while Redis is down.
	rdb, err := redisdb.Open(redisdb.Config{URL: "redis://" + redisSrv.Addr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rdb.Close() })
	m := newMoneyEnv(t, rdb, []string{"f1", "f2", "f3", "f4", "f5", "f6"}, "300.00")
	wantReadyz(t, m, "ok", redisSrv.Addr)

	run := newFaultRun(m)
	var wg sync.WaitGroup
	t.Cleanup(func() { run.abort.Store(true); run.release(); wg.Wait() }) // also on a failed test
	for w := range workers {
		wg.Go(func() { run.worker(t, w, quota) })
	}
	if !moneyWaitFor(30*time.Second, func() bool { return run.finished.Load() >= workers*quota/3 }) {
		t.Fatalf("only %d transfers answered before the outage", run.finished.Load())
	}

	// Crash.
	run.phase.Store(phaseDown)
	stopAt := time.Now()
	redisSrv.Stop()
	wantReadyz(t, m, "unavailable", redisSrv.Addr)
	probe := faultCall{from: "f1", to: "f2", amount: "1.00", key: "probe-after-crash"}
	if a, err := m.transfer(probe.from, probe.to, probe.amount, probe.key); err != nil {
		t.Fatal(err)
	} else if err := moneyProblemError(a, http.StatusServiceUnavailable, "The data store is temporarily unavailable; retry later."); err != nil {
		t.Fatalf("transfer while Redis is down: %v", err)
	}
	// Every worker still busy now holds a 503 and waits to retry.
	if !moneyWaitFor(30*time.Second, func() bool { return run.parked.Load()+run.exited.Load() == workers }) {
		t.Fatalf("%d of %d workers never saw the outage", workers-run.parked.Load()-run.exited.Load(), workers)
	}
	if run.unavailable.Load() == 0 {
		t.Fatal("no caller saw a 503 while Redis was down")
	}

	// Redis comes back; the same server must recover without help.
	restartAt := time.Now()
	if err := redisSrv.Restart(); err != nil {
		t.Fatal(err)
	}
	upAt := time.Now() // redis-server answers PING again
	attempts, answer, lastErr := 0, moneyAnswer{}, error(nil)
	moneyWaitFor(30*time.Second, func() bool {
		attempts++
		a, err := m.transfer(probe.from, probe.to, probe.amount, probe.key)
		if err != nil || a.status != http.StatusServiceUnavailable {
			answer, lastErr = a, err
			return true
		}
		if err := moneyProblemError(a, http.StatusServiceUnavailable, "The data store is temporarily unavailable; retry later."); err != nil {
			t.Error(err)
		}
		return false
	})
	recovery, afterUp := time.Since(restartAt), time.Since(upAt)
	if answer.status != http.StatusCreated {
		t.Fatalf("after Redis came back the probe transfer answered %d %s %v (after %v)", answer.status, answer.body, lastErr, recovery)
	}
	run.record(t, probe, answer, true)
	wantReadyz(t, m, "ok", redisSrv.Addr)

	// Callers retry what failed, with the same keys, and finish their runs.
	run.phase.Store(phaseBack)
	run.release()
	wg.Wait()
	run.replayAll(t)
	if _, complete := m.auditMoney(t, run.book); !complete {
		t.Errorf("a statement reached %d entries, so the check of statements was partial", accounts.MaxStatementLimit)
	}
	t.Logf("%d transfers answered 201 (%d retries after a lost reply were answered from the idempotency record), "+
		"%d refused 422, %d answers 503 while down; Redis down %v; first transfer through %v after the restart began, "+
		"%v after redis-server answered PING (%d attempts)",
		len(run.book), run.lostReplies.Load(), run.refused.Load(), run.unavailable.Load(),
		restartAt.Sub(stopAt).Round(time.Millisecond), recovery.Round(time.Millisecond), afterUp.Round(time.Millisecond), attempts)
}

// wantReadyz checks /readyz answers 200, within the probe's second, with
// Redis's state wantRedis in its body, without naming where Redis is.
func wantReadyz(t *testing.T, m *moneyEnv, wantRedis, redisAddr string) {
	t.Helper()
	// Within a few probes, as a load balancer sees it: right after Redis
	// restarts, a pooled connection from before the crash may fail the
	// first ping while the transfers already go through.
	var a moneyAnswer
	var err error
	var body struct {
		Status string `json:"status"`
		Redis  string `json:"redis"`
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		started := time.Now()
		if a, err = m.send(http.MethodGet, "/readyz", ""); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(started); took > time.Second {
			t.Errorf("/readyz took %v: longer than the readiness probe's timeout (1 s)", took)
		}
		body.Redis = ""
		if json.Unmarshal(a.body, &body) == nil && body.Redis == wantRedis || time.Now().After(deadline) {
			break
		}
	}
	if a.status != http.StatusOK || body.Redis != wantRedis || body.Status != "ok" {
		t.Errorf("/readyz: %d %s; want 200 with redis %q", a.status, a.body, wantRedis)
	}
	_, port, _ := strings.Cut(redisAddr, ":")
	if bytes.Contains(a.body, []byte(port)) || bytes.Contains(a.body, []byte("127.0.0.1")) {
		t.Errorf("/readyz names where Redis is: %s", a.body)
	}
}

// Phases of the fault run, for telling when a 503 is legitimate.
const (
	phaseUp   int32 = iota // before the crash: a 503 is a bug
	phaseDown              // from the moment Redis is stopped
	phaseBack              // after a transfer went through again
)

// faultCall is one transfer a caller wants done, and the body of its
// first 201.
type faultCall struct {
	from, to, amount, key string
	body                  []byte
}

// faultRun is the shared state of the callers of the fault test.
type faultRun struct {
	m     *moneyEnv
	pairs [][2]string
	phase atomic.Int32
	abort atomic.Bool

	restarted   chan struct{} // closed when callers may retry
	releaseOnce sync.Once

	finished, parked, exited          atomic.Int64
	refused, unavailable, lostReplies atomic.Int64
	mu                                sync.Mutex
	book                              map[string]moneyTransfer // every distinct 201, by transfer id
	answered                          map[string]faultCall     // every key that answered 201
}

func newFaultRun(m *moneyEnv) *faultRun {
	r := &faultRun{m: m, restarted: make(chan struct{}),
		book: map[string]moneyTransfer{}, answered: map[string]faultCall{}}
	for _, a := range m.ids {
		for _, b := range m.ids {
			if a != b {
				r.pairs = append(r.pairs, [2]string{a, b})
			}
		}
	}
	return r
}

func (r *faultRun) release() { r.releaseOnce.Do(func() { close(r.restarted) }) }

// worker makes quota transfers, each with its own Idempotency-Key, over
// pairs spread evenly across the accounts (so each account's statement
// stays under the statement limit and can be checked in full).
func (r *faultRun) worker(t *testing.T, w, quota int) {
	defer r.exited.Add(1)
	rng := rand.New(rand.NewPCG(uint64(w), 7))
	for n := range quota {
		p := r.pairs[(w*quota+n)%len(r.pairs)]
		r.untilAnswered(t, faultCall{from: p[0], to: p[1], amount: moneyAmount(rng, 12000), key: fmt.Sprintf("fault-%d-%d", w, n)})
		r.finished.Add(1)
	}
}

// untilAnswered sends c, and after a 503 waits for Redis to be back and
// sends it again with the same key, until the answer is 201 or 422.
func (r *faultRun) untilAnswered(t *testing.T, c faultCall) {
	sawOutage := false
	for !r.abort.Load() {
		a, err := r.m.transfer(c.from, c.to, c.amount, c.key)
		if err != nil {
			t.Errorf("transfer %s: %v", c.key, err)
			return
		}
		switch a.status {
		case http.StatusCreated:
			r.record(t, c, a, sawOutage)
			return
		case http.StatusUnprocessableEntity:
			if err := moneyInsufficientFunds(a); err != nil {
				t.Errorf("transfer %s: %v", c.key, err)
			}
			r.refused.Add(1)
			return
		case http.StatusServiceUnavailable:
			if err := moneyProblemError(a, http.StatusServiceUnavailable, "The data store is temporarily unavailable; retry later."); err != nil {
				t.Errorf("transfer %s: %v", c.key, err)
			}
			if r.phase.Load() == phaseUp {
				t.Errorf("transfer %s answered 503 while Redis was up", c.key)
			}
			r.unavailable.Add(1)
			sawOutage = true
			r.awaitRestart()
		default:
			t.Errorf("transfer %s: %d %s; want 201, 422 or (while Redis is down) 503", c.key, a.status, a.body)
			return
		}
	}
}

// awaitRestart waits until callers are told Redis is back; a 503 after
// that is followed by a short pause, as Retry-After asks (shortened).
func (r *faultRun) awaitRestart() {
	select {
	case <-r.restarted:
		time.Sleep(20 * time.Millisecond)
	default:
		r.parked.Add(1)
		<-r.restarted
		r.parked.Add(-1)
	}
}

// record checks a 201 and books its transfer. A replay is only possible
// for a key whose earlier attempt got no definite answer.
func (r *faultRun) record(t *testing.T, c faultCall, a moneyAnswer, retried bool) {
	b, err := decodeMoneyTransfer(a, c.from, c.to, c.amount)
	if err != nil {
		t.Errorf("transfer %s: %v", c.key, err)
		return
	}
	if h := a.header.Get("Idempotent-Replayed"); h != "" && (h != "true" || !retried) {
		t.Errorf("transfer %s: Idempotent-Replayed %q on a first attempt", c.key, h)
	}
	if a.replayed() {
		r.lostReplies.Add(1)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.book[b.TransferID]; dup {
		t.Errorf("transfer id %s answered for two keys (second: %s)", b.TransferID, c.key)
	}
	r.book[b.TransferID] = b
	c.body = a.body
	r.answered[c.key] = c
}

// replayAll sends every successful transfer once more with its key: each
// must be answered from the idempotency record, byte for byte, and move
// nothing (auditMoney checks the ledger afterwards).
func (r *faultRun) replayAll(t *testing.T) {
	for key, c := range r.answered {
		a, err := r.m.transfer(c.from, c.to, c.amount, key)
		if err != nil {
			t.Fatal(err)
		}
		if a.status != http.StatusCreated || !a.replayed() || !bytes.Equal(a.body, c.body) {
			t.Errorf("repeat of %s: %d replayed=%q %s; first answer %s", key, a.status,
				a.header.Get("Idempotent-Replayed"), a.body, c.body)
		}
	}
}
