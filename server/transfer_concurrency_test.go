package server_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/facade-dev/facade/internal/testkit/testredis"
)

// Thousands of random transfers through HTTP among a few accounts, from 32
// callers at once, some of them sent twice at the same instant with the
// same Idempotency-Key (a client that retries too eagerly). Users must see:
// no cent made or lost, no balance below zero at any time, one ledger entry
// per transfer they were told of, every duplicate answered with
// Idempotent-Replayed: true and the first answer byte for byte, and no
// refusal but "insufficient funds".
func TestConcurrencyRandomTransfersOverHTTP(t *testing.T) {
	const transfers, callers = 3000, 32
	m := newMoneyEnv(t, testredis.Client(t), []string{"c1", "c2", "c3", "c4", "c5"}, "400.00")
	jobs := concurrencyJobs(m.ids, transfers)
	answers := make([][]moneyAnswer, len(jobs))

	sampler := startBalanceSampler(t, m)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < len(jobs); i = int(next.Add(1)) - 1 {
				answers[i] = m.sendJob(t, jobs[i])
			}
		})
	}
	wg.Wait()
	samples := sampler.stop()

	tally := concurrencyTally{book: map[string]moneyTransfer{}, first: map[int][]byte{}}
	for i, job := range jobs {
		tally.check(t, i, job, answers[i])
	}
	if tally.refused == 0 || tally.replays == 0 {
		t.Errorf("the run never hit insufficient funds (%d) or a concurrent replay (%d): it proves little",
			tally.refused, tally.replays)
	}
	repeated := repeatKeyed(t, m, jobs, tally.first)
	_, complete := m.auditMoney(t, tally.book)
	t.Logf("%d requests: %d transfers done (201), %d concurrent duplicates answered as replays, %d refused 422; "+
		"%d later repeats replayed; %d balance reads during the run; statements complete: %v",
		tally.requests, len(tally.book), tally.replays, tally.refused, repeated, samples, complete)
}

// concurrencyJob is one transfer a caller asks for. Twice means two
// goroutines send it at the same instant with the same key.
type concurrencyJob struct {
	from, to, amount, key string
	twice                 bool
}

// concurrencyJobs draws n transfers between distinct accounts, 0.01 to
// 150.00 EUR (the accounts open with 400.00, so refusals happen). Every
// 4th carries an Idempotency-Key; every 8th is also sent twice at once.
func concurrencyJobs(ids []string, n int) []concurrencyJob {
	rng := rand.New(rand.NewPCG(42, 3000))
	jobs := make([]concurrencyJob, n)
	for i := range jobs {
		from := rng.IntN(len(ids))
		to := (from + 1 + rng.IntN(len(ids)-1)) % len(ids)
		jobs[i] = concurrencyJob{from: ids[from], to: ids[to], amount: moneyAmount(rng, 15000)}
		if i%4 == 0 {
			jobs[i].key = fmt.Sprintf("conc-%d", i)
			jobs[i].twice = i%8 == 0
		}
	}
	return jobs
}

// sendJob sends the job (both copies released together when twice) and
// returns the answers; a transport error is reported and leaves a zero
// answer.
func (m *moneyEnv) sendJob(t *testing.T, job concurrencyJob) []moneyAnswer {
	copies := 1
	if job.twice {
		copies = 2
	}
	out := make([]moneyAnswer, copies)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for k := range copies {
		wg.Go(func() {
			<-start
			a, err := m.transfer(job.from, job.to, job.amount, job.key)
			if err != nil {
				t.Errorf("transfer %+v: %v", job, err)
			}
			out[k] = a
		})
	}
	close(start)
	wg.Wait()
	return out
}

// concurrencyTally collects what callers were told.
type concurrencyTally struct {
	requests, replays, refused int
	book                       map[string]moneyTransfer // distinct 201s by transfer id
	first                      map[int][]byte           // keyed job index → body of its first 201
}

// check verifies the answers to one job: 201 or 422 insufficient funds
// only; at most one transfer per key; a replay only beside the transfer
// it repeats, byte for byte, and flagged Idempotent-Replayed: true.
func (c *concurrencyTally) check(t *testing.T, i int, job concurrencyJob, answers []moneyAnswer) {
	t.Helper()
	var fresh, replays []moneyAnswer
	for _, a := range answers {
		c.requests++
		switch {
		case a.status == http.StatusCreated && a.replayed():
			replays = append(replays, a)
		case a.status == http.StatusCreated && a.header.Get("Idempotent-Replayed") == "":
			fresh = append(fresh, a)
		case a.status == http.StatusUnprocessableEntity:
			if err := moneyInsufficientFunds(a); err != nil {
				t.Errorf("job %d: %v", i, err)
			}
			c.refused++
		default:
			t.Errorf("job %d %+v: %d Idempotent-Replayed=%q %s; want 201 or 422", i, job, a.status,
				a.header.Get("Idempotent-Replayed"), a.body)
		}
	}
	if len(fresh) > 1 || (len(replays) > 0 && len(fresh) != 1) || (job.key == "" && len(replays) > 0) {
		t.Errorf("job %d %+v: %d transfers and %d replays for one request", i, job, len(fresh), len(replays))
		return
	}
	for _, r := range replays {
		if !bytes.Equal(r.body, fresh[0].body) {
			t.Errorf("job %d: replay %s differs from the first answer %s", i, r.body, fresh[0].body)
		}
	}
	c.replays += len(replays)
	if len(fresh) == 1 {
		c.book1(t, i, job, fresh[0])
	}
}

// book1 records a transfer that happened.
func (c *concurrencyTally) book1(t *testing.T, i int, job concurrencyJob, a moneyAnswer) {
	t.Helper()
	b, err := decodeMoneyTransfer(a, job.from, job.to, job.amount)
	if err != nil {
		t.Errorf("job %d: %v", i, err)
		return
	}
	if _, dup := c.book[b.TransferID]; dup {
		t.Errorf("job %d: transfer id %s was already given to another request", i, b.TransferID)
	}
	c.book[b.TransferID] = b
	if job.key != "" {
		c.first[i] = a.body
	}
}

// repeatKeyed sends every keyed job that succeeded once more, after the
// run, from several callers: each must be a byte-identical replay. It
// returns how many it sent.
func repeatKeyed(t *testing.T, m *moneyEnv, jobs []concurrencyJob, first map[int][]byte) int {
	t.Helper()
	todo := make(chan int, len(first))
	for i := range first {
		todo <- i
	}
	close(todo)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for i := range todo {
				job := jobs[i]
				a, err := m.transfer(job.from, job.to, job.amount, job.key)
				if err != nil || a.status != http.StatusCreated || !a.replayed() || !bytes.Equal(a.body, first[i]) {
					t.Errorf("repeat of job %d: %d replayed=%q %s %v; first answer %s", i, a.status,
						a.header.Get("Idempotent-Replayed"), a.body, err, first[i])
				}
			}
		})
	}
	wg.Wait()
	return len(first)
}

// balanceSampler reads every balance over HTTP, again and again, while
// transfers run: no reader may ever see a negative one.
type balanceSampler struct {
	done    chan struct{}
	once    sync.Once
	wg      sync.WaitGroup
	samples atomic.Int64
}

func startBalanceSampler(t *testing.T, m *moneyEnv) *balanceSampler {
	s := &balanceSampler{done: make(chan struct{})}
	t.Cleanup(func() { s.stop() }) // also when the test fails early
	s.wg.Go(func() {
		for {
			for _, id := range m.ids {
				select {
				case <-s.done:
					return
				default:
				}
				b, err := m.balance(id)
				if err != nil {
					t.Error(err)
					return
				}
				if b < 0 {
					t.Errorf("a caller saw %s at %d cents during the run", id, b)
				}
				s.samples.Add(1)
			}
		}
	})
	return s
}

// stop ends the sampling and returns how many balances were read.
func (s *balanceSampler) stop() int64 {
	s.once.Do(func() { close(s.done) })
	s.wg.Wait()
	return s.samples.Load()
}
