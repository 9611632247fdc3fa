package accounts

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// asTheBuildBeforeKeptThem moves account id's stream lines into its
// sorted set, scored as the build before the streams scored them (the
// transfer's time, strictly increasing per account), and forgets the
// format key: the store of an instance of that build, just upgraded.
func asTheBuildBeforeKeptThem(t *testing.T, rdb redis.UniversalClient, ids ...string) {
	t.Helper()
	ctx := context.Background()
	for _, id := range ids {
		entries, err := rdb.XRevRange(ctx, linesKey(id), "+", "-").Result()
		if err != nil {
			t.Fatal(err)
		}
		lines, err := streamLines(entries, Position{at: 1<<63 - 1})
		if err != nil {
			t.Fatal(err)
		}
		prev := int64(0)
		for _, l := range slices.Backward(lines) { // oldest first
			created, err := rdb.HGet(ctx, transferKey(l.tid), "created").Int64()
			if err != nil {
				t.Fatal(err)
			}
			prev = max(created, prev+1)
			rdb.ZAdd(ctx, historyKey(id), redis.Z{Score: float64(prev), Member: l.tid})
		}
	}
	if err := rdb.Del(ctx, formatKey(), linesKey("A"), linesKey("B")).Err(); err != nil {
		t.Fatal(err)
	}
}

// TestStatementsAcrossTheRollout: a store upgraded from the build before
// the streams keeps writing the sorted set that build reads, every
// transfer in it, until the format key says the rollout is done; then
// the stream only. Read through this build, the statement is one history
// all along: every page back to the first transfer, each transfer once,
// in the ledger's order, balances running, and a date range across the
// switch exact.
func TestStatementsAcrossTheRollout(t *testing.T) {
	s, rdb := newTestStore(t)
	ctx := context.Background()
	open(t, s, "A", "EUR", "100.00")
	open(t, s, "B", "EUR", "100.00")
	transferMany(t, s, rdb, 40)
	asTheBuildBeforeKeptThem(t, rdb, "A", "B")

	during := transferMany(t, s, rdb, 60) // beside instances of the build before
	if n, _ := rdb.Exists(ctx, linesKey("A"), linesKey("B"), formatKey()).Result(); n != 0 {
		t.Fatalf("during the rollout %d stream or format keys were written", n)
	}
	slices.Reverse(during)
	for _, id := range []string{"A", "B"} { // what the build before reads: ZREVRANGE of the sorted set
		if seen, err := rdb.ZRevRange(ctx, historyKey(id), 0, -1).Result(); err != nil || !slices.Equal(seen, during) {
			t.Fatalf("%s's sorted set holds %d transfers, want the ledger's %d, newest first (%v)", id, len(seen), len(during), err)
		}
	}

	if err := rdb.Set(ctx, formatKey(), "stream", 0).Err(); err != nil { // the rollout is done
		t.Fatal(err)
	}
	order := transferMany(t, s, rdb, 50)
	if n, _ := rdb.ZCard(ctx, historyKey("A")).Result(); n != 100 {
		t.Fatalf("after the rollout the sorted set holds %d transfers, want the 100 before", n)
	}
	slices.Reverse(order)
	wantWholeStatement(t, s, "A", order, 10000)
	all := walk(t, s, "A", StatementQuery{Limit: 100})
	from, to := all[130].CreatedAt, all[20].CreatedAt // one in the sorted set, one in the stream
	var want []string
	for _, e := range all {
		if !e.CreatedAt.Before(from) && !e.CreatedAt.After(to) {
			want = append(want, e.TransferID)
		}
	}
	if got := ids(walk(t, s, "A", StatementQuery{Limit: 9, From: from, To: to})); !slices.Equal(got, want) || len(want) < 111 {
		t.Fatalf("range across the switch: %d transfers, want %d (at least 111)", len(got), len(want))
	}
	// An instance of the build before still running after the switch (the
	// key set too early) writes the sorted set: that line shows in its
	// place, not lost under the stream's lines.
	at := all[10].CreatedAt
	rdb.HSet(ctx, transferKey("late"), "from", "B", "to", "A", "amount", "1", "currency", "EUR", "exponent", "2",
		"created", at.UnixMicro(), "ref", "", "from_after", "0", "to_after", "0")
	rdb.ZAdd(ctx, historyKey("A"), redis.Z{Score: float64(at.UnixMicro()), Member: "late"})
	j := 10
	for j+1 < len(all) && all[j+1].CreatedAt.Equal(at) {
		j++
	}
	want = slices.Insert(slices.Clone(order), j+1, "late")
	if got := ids(walk(t, s, "A", StatementQuery{Limit: 7})); !slices.Equal(got, want) {
		t.Fatalf("with a line of the build before among the stream's: %v\nwant %v", got, want)
	}
}

// TestAFreshStoreWritesTheStreamFromItsFirstTransfer: no build before the
// streams has a history in a store that never applied a transfer, so its
// first transfer sets the format key and writes the stream only.
func TestAFreshStoreWritesTheStreamFromItsFirstTransfer(t *testing.T) {
	s, rdb := newTestStore(t)
	ctx := context.Background()
	open(t, s, "A", "EUR", "1.00")
	open(t, s, "B", "EUR", "0")
	if _, _, err := s.transferText(ctx, textRequest{From: "A", To: "B", Amount: "0.10"}, testMax); err != nil {
		t.Fatal(err)
	}
	if f, _ := rdb.Get(ctx, formatKey()).Result(); f != "stream" {
		t.Fatalf("format key %q, want stream", f)
	}
	if n, _ := rdb.Exists(ctx, historyKey("A"), historyKey("B")).Result(); n != 0 {
		t.Fatalf("%d sorted sets written", n)
	}
	if n, _ := rdb.XLen(ctx, linesKey("B")).Result(); n != 1 {
		t.Fatalf("B's stream holds %d entries, want 1", n)
	}
}

// TestSortedSetCursorsAreSealedAsTheBuildBeforeSealedThem: during a
// rollout a page's next link may reach an instance of either build. A
// position in the sorted set is sealed as that build sealed it (the score
// alone), one of that build opens here, and a stream position opens as
// it was sealed.
func TestSortedSetCursorsAreSealedAsTheBuildBeforeSealedThem(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	bound := statementBound("alice", "1001")
	sealed, err := s.SealStatementCursor(ctx, "alice", mustAccount("1001"), Position{at: 1_700_000_000_000_123})
	if err != nil {
		t.Fatal(err)
	}
	if raw, err := s.open(ctx, bound, sealed); err != nil || string(raw) != "1700000000000123" {
		t.Fatalf("a sorted set position sealed as %q (%v), not its score alone", raw, err)
	}
	before, err := s.seal(ctx, bound, []byte(strconv.FormatInt(42, 10))) // as the build before sealed it
	if err != nil {
		t.Fatal(err)
	}
	if p, err := s.OpenStatementCursor(ctx, "alice", mustAccount("1001"), before); err != nil || p != (Position{at: 42}) {
		t.Fatalf("the build before's cursor opens as %+v, %v", p, err)
	}
	streamed := Position{at: 1_700_000_000_000_123, seq: 3, line: 5}
	sealed, err = s.SealStatementCursor(ctx, "alice", mustAccount("1001"), streamed)
	if err != nil {
		t.Fatal(err)
	}
	if p, err := s.OpenStatementCursor(ctx, "alice", mustAccount("1001"), sealed); err != nil || p != streamed {
		t.Fatalf("a stream position opens as %+v, %v; want %+v", p, err, streamed)
	}
}

// TestStreamStaysInOrderWhenRedisClockGoesBack: a batch whose time is
// before the stream's newest entry (Redis's clock stepped back) goes
// right after that entry, and the statement shows every transfer once,
// newest first.
func TestStreamStaysInOrderWhenRedisClockGoesBack(t *testing.T) {
	s, rdb := newTestStore(t)
	ctx := context.Background()
	open(t, s, "A", "EUR", "100.00")
	open(t, s, "B", "EUR", "100.00")
	first, _, err := s.transferText(ctx, textRequest{From: "A", To: "B", Amount: "1"}, testMax)
	if err != nil {
		t.Fatal(err)
	}
	ahead := time.Now().Add(time.Hour).UnixMicro() // a line written while the clock was an hour ahead
	rdb.HSet(ctx, transferKey("ahead"), "from", "B", "to", "A", "amount", "1", "currency", "EUR", "exponent", "2",
		"created", ahead, "ref", "", "from_after", "0", "to_after", "0")
	if err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: linesKey("A"), ID: strconv.FormatInt(ahead, 10) + "-0", Values: []string{"t", "ahead"}}).Err(); err != nil {
		t.Fatal(err)
	}
	last, _, err := s.transferText(ctx, textRequest{From: "A", To: "B", Amount: "2"}, testMax)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ids(walk(t, s, "A", StatementQuery{Limit: 1})), []string{last.ID, "ahead", first.ID}; !slices.Equal(got, want) {
		t.Fatalf("statement %v, want %v", got, want)
	}
}
