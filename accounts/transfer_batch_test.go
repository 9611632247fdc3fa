package accounts

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/internal/testkit/parked"
	"github.com/facade-dev/facade/internal/testkit/testredis"
)

// batchCase is one transfer of a batch and what it must come to.
type batchCase struct {
	req    textRequest
	want   *facade.Error // nil: it happens
	replay bool          // it happened before the batch: answered again, no money moves
}

// batchCases mixes transfers that happen with every refusal the script
// itself decides, each between happening neighbours.
func batchCases() []batchCase {
	ok := func(from, to, amount, key string) batchCase {
		return batchCase{req: textRequest{From: from, To: to, Amount: amount, IdempotencyKey: key, Principal: "p"}}
	}
	no := func(from, to, amount, key string, want *facade.Error) batchCase {
		c := ok(from, to, amount, key)
		c.want = want
		return c
	}
	return []batchCase{
		ok("A", "B", "1.00", ""),
		no("poor", "B", "5.00", "", facade.ErrInsufficientFunds),
		ok("B", "A", "0.50", "k1"),
		{req: textRequest{From: "A", To: "B", Amount: "0.01", IdempotencyKey: "k0", Principal: "p"}, replay: true},
		no("missing", "B", "1", "", facade.ErrNotFound),
		ok("A", "poor", "2.00", ""),
		no("A", "yen", "1", "", facade.ErrCurrencyMismatch),
		ok("A", "B", "0.01", "k2"),
		no("yen", "A", "0.5", "", facade.ErrBadAmount), // JPY has no decimals
		no("A", "B", "9.99", "k0", facade.ErrIdempotencyReuse),
		no("A", "broken", "1", "", facade.ErrInternal),
		ok("B", "A", "3.00", ""),
	}
}

// openBatchAccounts opens the accounts batchCases use ("broken" is a key
// of another type, data Facade did not write) and makes the transfer
// whose Idempotency-Key k0 the batch reuses. It returns the balances.
func openBatchAccounts(t *testing.T, s *Store, rdb redis.UniversalClient) map[string]int64 {
	t.Helper()
	open(t, s, "A", "EUR", "100.00")
	open(t, s, "B", "EUR", "100.00")
	open(t, s, "poor", "EUR", "0")
	open(t, s, "yen", "JPY", "1000")
	ctx := context.Background()
	if err := rdb.Set(ctx, accountKey("broken"), "not a hash", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.transferText(ctx, textRequest{From: "A", To: "B", Amount: "0.01", IdempotencyKey: "k0", Principal: "p"}, testMax); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Del(ctx, ledgerKey(), linesKey("A"), linesKey("B")).Err(); err != nil {
		t.Fatal(err) // the books below start with the batch
	}
	return map[string]int64{"A": 9999, "B": 10001, "poor": 0, "yen": 1000}
}

// A refused transfer in a batch refuses only itself: its neighbours in the
// same script call happen, each with its own answer, and the books hold
// exactly the transfers that happened.
func TestBatchRefusalsDoNotFailTheirNeighbours(t *testing.T) {
	s, rdb := newTestStore(t)
	opening := openBatchAccounts(t, s, rdb)
	cases := batchCases()
	calls := make([]*transferCall, len(cases))
	tids := make([]string, len(cases))
	for i, c := range cases {
		tids[i] = newTransferID()
		calls[i] = &transferCall{keys: transferKeys(c.req.parsed(), tids[i]), args: transferArgs(c.req.parsed(), tids[i])}
	}
	s.applyTransfers(context.Background(), calls) // one script call for all
	happened := checkBatchAnswers(t, cases, calls)
	wantBooks(t, s, rdb, happened, true, opening)
}

// checkBatchAnswers checks each call's own answer and returns the
// transfers that happened.
func checkBatchAnswers(t *testing.T, cases []batchCase, calls []*transferCall) []Transfer {
	t.Helper()
	var happened []Transfer
	for i, c := range cases {
		if calls[i].err != nil {
			t.Fatalf("transfer %d: the whole call failed: %v", i, calls[i].err)
		}
		tr, replayed, err := decodeTransfer(c.req.parsed(), calls[i].reply)
		checkAnswer(t, i, c, tr, replayed, err)
		if err == nil && !replayed {
			happened = append(happened, tr)
		}
	}
	return happened
}

func checkAnswer(t *testing.T, i int, c batchCase, tr Transfer, replayed bool, err error) {
	t.Helper()
	switch {
	case c.replay && (err != nil || !replayed || tr.Amount != 1):
		t.Errorf("transfer %d %+v: %v (replayed %v, %+v); want the first answer again", i, c.req, err, replayed, tr)
	case c.want == nil && !c.replay && (err != nil || replayed || tr.ID == ""):
		t.Errorf("transfer %d %+v: %v (replayed %v); want it to happen", i, c.req, err, replayed)
	case c.want != nil && !errorIs(err, c.want):
		t.Errorf("transfer %d %+v: %v; want %s", i, c.req, err, c.want.Code)
	}
}

func errorIs(err error, want *facade.Error) bool {
	return err != nil && facade.CodeOf(err) == want.Code
}

// wantBooks checks that the ledger holds exactly the transfers that
// happened (in order when ordered), each with its record and an entry in
// both statements, and that the balances are the opening ones moved by
// those transfers, each once.
func wantBooks(t *testing.T, s *Store, rdb redis.UniversalClient, happened []Transfer, ordered bool, opening map[string]int64) {
	t.Helper()
	want := maps.Clone(opening)
	for _, tr := range happened {
		want[tr.From] -= tr.Amount
		want[tr.To] += tr.Amount
	}
	ctx := context.Background()
	entries, err := rdb.XRange(ctx, ledgerKey(), "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	var ledger []string
	for _, e := range entries {
		ledger = append(ledger, e.Values["transfer"].(string))
	}
	var applied []string
	for _, tr := range happened {
		applied = append(applied, tr.ID)
		rec, err := rdb.HGetAll(ctx, transferKey(tr.ID)).Result()
		if err != nil || rec["from"] != tr.From || rec["to"] != tr.To || rec["amount"] != fmt.Sprint(tr.Amount) {
			t.Errorf("record of %s = %v, %v; want %+v", tr.ID, rec, err, tr)
		}
		for _, acct := range []string{tr.From, tr.To} {
			if !slices.Contains(ids(walk(t, s, acct, StatementQuery{Limit: MaxStatementLimit})), tr.ID) {
				t.Errorf("statement of %s lacks %s", acct, tr.ID)
			}
		}
	}
	if !ordered {
		slices.Sort(ledger)
		slices.Sort(applied)
	}
	if !slices.Equal(ledger, applied) {
		t.Errorf("ledger = %v; want the transfers that happened, in order: %v", ledger, applied)
	}
	for id, b := range want {
		if got := balance(t, s, id); got != b {
			t.Errorf("%s holds %d; want %d", id, got, b)
		}
	}
}

// scriptGate holds every transfer script call until released, counting
// the calls and the transfers each carried.
type scriptGate struct {
	release chan struct{}
	mu      sync.Mutex
	sizes   []int
	held    atomic.Int64
}

func (g *scriptGate) DialHook(next redis.DialHook) redis.DialHook { return next }
func (g *scriptGate) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (g *scriptGate) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		args := cmd.Args()
		if name := cmd.Name(); (name != "evalsha" && name != "eval") || args[1] != transferScript.Hash() {
			return next(ctx, cmd)
		}
		nkeys, _ := args[2].(int)
		g.mu.Lock()
		g.sizes = append(g.sizes, (len(args)-3-nkeys-1)/9) // 9 arguments a transfer (transfer.lua)
		g.mu.Unlock()
		g.held.Add(1)
		<-g.release
		return next(ctx, cmd)
	}
}

// Concurrent callers that queue while batches are in flight go out in one
// script call, and each gets its own answer: the refusals among them fail
// no neighbour.
func TestConcurrentTransfersShareOneScriptCallAndKeepTheirOwnAnswers(t *testing.T) {
	s, rdb := newTestStore(t)
	opening := openBatchAccounts(t, s, rdb)
	ctx := context.Background()
	if err := transferScript.Load(ctx, rdb).Err(); err != nil { // no NOSCRIPT fallback to count
		t.Fatal(err)
	}
	gate := &scriptGate{release: make(chan struct{})}
	rdb.AddHook(gate)

	// Fill every in-flight slot with one transfer each, then queue the rest.
	warm := batchCase{req: textRequest{From: "A", To: "B", Amount: "0.01"}}
	var cases []batchCase
	for range transferBatches {
		cases = append(cases, warm)
	}
	cases = append(cases, batchCases()...)
	answers := make([]struct {
		tr       Transfer
		replayed bool
		err      error
	}, len(cases))
	var wg sync.WaitGroup
	start := func(i int) {
		wg.Go(func() {
			answers[i].tr, answers[i].replayed, answers[i].err = s.transferText(ctx, cases[i].req, testMax)
		})
	}
	for i := range transferBatches {
		start(i)
		waitFor(t, func() bool { return gate.held.Load() == int64(i+1) })
	}
	for i := transferBatches; i < len(cases); i++ {
		start(i)
	}
	queued := len(cases) - transferBatches
	waitFor(t, func() bool { return parked.In("redisdb.(*Combiner[...]).Do") == queued })
	close(gate.release)
	wg.Wait()

	var happened []Transfer
	for i, c := range cases {
		a := answers[i]
		checkAnswer(t, i, c, a.tr, a.replayed, a.err)
		if a.err == nil && !a.replayed {
			happened = append(happened, a.tr)
		}
	}
	want := make([]int, transferBatches, transferBatches+1)
	for i := range want {
		want[i] = 1
	}
	if want = append(want, queued); !slices.Equal(gate.sizes, want) {
		t.Fatalf("script calls carried %v transfers; want %v", gate.sizes, want)
	}
	wantBooks(t, s, rdb, happened, false, opening)
}

// waitFor polls cond, the observable state a test waits for.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Microsecond) {
		if cond() {
			return
		}
	}
	t.Fatal("condition not reached in 30 s")
}

// Redis killed while writing a batch to its append-only file: after the
// restart each transfer of the batch has happened whole (ledger entry,
// record, both statements, both balances) or not at all, and those that
// happened are the first ones of the batch, in order. The file is cut at
// points across the batch's writes, and once not at all. (Redis writes a
// script's effects as one MULTI/EXEC block and loads a file cut inside a
// block without it, so in practice a batch comes back whole or not at all;
// what the service needs is the weaker per-transfer rule checked here.)
func TestBatchCutShortInTheAppendOnlyFileIsAllOrNothingPerTransfer(t *testing.T) {
	srv := testredis.Start(t, testredis.Options{AOF: true})
	rdb := srv.Client(t)
	s := NewStore(rdb, Config{Log: slog.New(slog.DiscardHandler)})
	opening := openBatchAccounts(t, s, rdb)
	aof := incrementalAOF(t, srv)
	before := fileSize(t, aof)

	cases := batchCases()
	calls := make([]*transferCall, len(cases))
	for i, c := range cases {
		tid := newTransferID()
		calls[i] = &transferCall{keys: transferKeys(c.req.parsed(), tid), args: transferArgs(c.req.parsed(), tid)}
	}
	s.applyTransfers(context.Background(), calls)
	happened := checkBatchAnswers(t, cases, calls)
	srv.Stop() // killed: appendfsync always has the block on disk
	full, err := os.ReadFile(aof)
	if err != nil || int64(len(full)) <= before {
		t.Fatalf("AOF %d bytes (%v); want the batch after %d", len(full), err, before)
	}

	const cuts = 6
	for i := range cuts + 1 {
		size := before + (int64(len(full))-before)*int64(i)/cuts
		t.Run(fmt.Sprintf("cut at %d of %d", size, len(full)), func(t *testing.T) {
			if err := os.WriteFile(aof, full[:size], 0o644); err != nil {
				t.Fatal(err)
			}
			if err := srv.Restart(); err != nil {
				t.Fatal(err)
			}
			defer srv.Stop()
			n := ledgerLen(t, rdb)
			if n > int64(len(happened)) || size == int64(len(full)) && n != int64(len(happened)) {
				t.Fatalf("ledger holds %d entries; the batch made %d", n, len(happened))
			}
			wantBooks(t, s, rdb, happened[:n], true, opening)
			t.Logf("%d of the batch's %d transfers came back", n, len(happened))
		})
	}
}

// incrementalAOF is the file Redis appends writes to (Redis 7 keeps a
// base file and incremental ones under appendonlydir).
func incrementalAOF(t *testing.T, srv *testredis.Server) string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(srv.Dir(), "appendonlydir", "*.incr.aof"))
	if err != nil || len(files) != 1 {
		t.Fatalf("incremental AOF files %v (%v); want one", files, err)
	}
	return files[0]
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// Transfers of one batch that reuse an account see its balance as the
// ones before left it, written out in digits (Lua would write 10^15 as
// "1e+15") and exact to the unit also where Lua's doubles are not (above
// 2^53 minor units).
func TestBatchKeepsBalancesExactBeyondDoublePrecision(t *testing.T) {
	s, rdb := newTestStore(t)
	ctx := context.Background()
	const big = int64(1)<<53 + 1 // 9007199254740993: no double holds it
	for _, id := range []string{"R", "S"} {
		if _, err := s.Create(ctx, Account{ID: mustAccount(id), Currency: eur, Balance: big}); err != nil {
			t.Fatal(err)
		}
	}
	open(t, s, "small", "EUR", "0.02")
	open(t, s, "Q", "EUR", "10000000000000.01") // 10^15 + 1 cents
	reqs := []textRequest{
		{From: "Q", To: "small", Amount: "0.01"},
		{From: "Q", To: "small", Amount: "100000"},
		{From: "small", To: "Q", Amount: "100000"},
		{From: "R", To: "S", Amount: "0.01"},
		{From: "R", To: "S", Amount: "0.01"},
		{From: "S", To: "small", Amount: "0.03"},
		{From: "small", To: "R", Amount: "0.05"},
		{From: "small", To: "R", Amount: "0.06"}, // one unit more than it holds
	}
	calls := make([]*transferCall, len(reqs))
	for i, req := range reqs {
		tid := newTransferID()
		calls[i] = &transferCall{keys: transferKeys(req.parsed(), tid), args: transferArgs(req.parsed(), tid)}
	}
	s.applyTransfers(ctx, calls)
	for i, c := range calls {
		_, _, err := decodeTransfer(reqs[i].parsed(), c.reply)
		if i < 7 && err != nil || i == 7 && !errorIs(err, facade.ErrInsufficientFunds) {
			t.Fatalf("transfer %d: %v", i, err)
		}
	}
	if got := balances(t, s, "R", "S", "small"); !slices.Equal(got, []int64{big - 2 + 5, big + 2 - 3, 1}) {
		t.Fatalf("balances = %v; want [%d %d 1]", got, big+3, big-1)
	}
	if got := balance(t, s, "Q"); got != 1e15 {
		t.Fatalf("Q holds %d; want 10^15", got)
	}
	if n := ledgerLen(t, rdb); n != 7 {
		t.Fatalf("ledger has %d entries; want 7", n)
	}
}

// Balances of up to 15 digits are moved in the script's memory and written
// once at the end of the batch (transfer.lua); an account that then meets
// one beyond that in the same batch is written first and moved by HINCRBY
// from there on. Either way each balance ends exact, in digits, and a
// transfer after the switch sees what the ones before it left.
func TestBatchMovesBalancesInMemoryAndOnStringsAlike(t *testing.T) {
	s, rdb := newTestStore(t)
	ctx := context.Background()
	const big = int64(1)<<53 + 1
	if _, err := s.Create(ctx, Account{ID: mustAccount("huge"), Currency: eur, Balance: big}); err != nil {
		t.Fatal(err)
	}
	open(t, s, "m", "EUR", "1.00")
	open(t, s, "n", "EUR", "1.00")
	open(t, s, "edge", "EUR", "9999999999999.99") // 15 digits of cents
	reqs := []textRequest{
		{From: "m", To: "n", Amount: "0.10"},    // in memory
		{From: "n", To: "huge", Amount: "0.05"}, // n written, then on strings
		{From: "m", To: "n", Amount: "0.01"},    // m written, then on strings
		{From: "n", To: "m", Amount: "0.02"},
		{From: "n", To: "m", Amount: "1.05"},    // n holds 1.04: refused
		{From: "m", To: "edge", Amount: "0.01"}, // edge reaches 10^15 cents in memory
	}
	calls := make([]*transferCall, len(reqs))
	for i, req := range reqs {
		tid := newTransferID()
		calls[i] = &transferCall{keys: transferKeys(req.parsed(), tid), args: transferArgs(req.parsed(), tid)}
	}
	s.applyTransfers(ctx, calls)
	for i, c := range calls {
		_, _, err := decodeTransfer(reqs[i].parsed(), c.reply)
		if i != 4 && err != nil || i == 4 && !errorIs(err, facade.ErrInsufficientFunds) {
			t.Fatalf("transfer %d: %v", i, err)
		}
	}
	if got := balances(t, s, "m", "n", "huge", "edge"); !slices.Equal(got, []int64{90, 104, big + 5, 1e15}) {
		t.Fatalf("balances = %v; want [90 104 %d 1000000000000000]", got, big+5)
	}
	if raw := rdb.HGet(ctx, accountKey("edge"), "balance").Val(); raw != "1000000000000000" {
		t.Fatalf("edge's balance is stored as %q; want digits", raw)
	}
	if n := ledgerLen(t, rdb); n != 5 {
		t.Fatalf("ledger has %d entries; want 5", n)
	}
}

// The demo runs on miniredis (an in-process Redis look-alike): the batch
// script must give the same answers there, refusals and all.
func TestBatchOnMiniredis(t *testing.T) {
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	s := NewStore(rdb, Config{Log: slog.New(slog.DiscardHandler)})
	opening := openBatchAccounts(t, s, rdb)
	cases := batchCases()
	calls := make([]*transferCall, len(cases))
	for i, c := range cases {
		tid := newTransferID()
		calls[i] = &transferCall{keys: transferKeys(c.req.parsed(), tid), args: transferArgs(c.req.parsed(), tid)}
	}
	s.applyTransfers(context.Background(), calls)
	wantBooks(t, s, rdb, checkBatchAnswers(t, cases, calls), true, opening)
}
