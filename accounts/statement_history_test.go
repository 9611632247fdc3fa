package accounts

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/facade-dev/facade"
)

// transferMany makes n transfers of 0.01 between A and B, from 8
// goroutines at once so that batches put several of them in the same
// microsecond, and returns their ids in the order the ledger applied them.
func transferMany(t testing.TB, s *Store, rdb redis.UniversalClient, n int) []string {
	t.Helper()
	ctx := context.Background()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < n; i += 8 {
				from, to := "A", "B"
				if i%3 == 0 {
					from, to = "B", "A"
				}
				if _, _, err := s.transferText(ctx, textRequest{From: from, To: to, Amount: "0.01", Reference: "r" + strconv.Itoa(i)}, testMax); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	return ledgerIDs(t, rdb)
}

// walk pages through a statement with q, following Next, and returns
// every transfer id, newest first.
func walk(t testing.TB, s *Store, id string, q StatementQuery) []StatementEntry {
	t.Helper()
	var all []StatementEntry
	for pages := 0; ; pages++ {
		page, err := s.Statement(context.Background(), mustAccount(id), q)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, page.Entries...)
		if page.Next == nil {
			return all
		}
		if pages > 1000 {
			t.Fatal("the walk does not end")
		}
		q.Before = page.Next
	}
}

// wantWholeStatement walks account id's statement in pages of 1, 7 and
// 100: each walk holds the transfers of order (newest first), each line's
// balance the account's right after it, from opening (minor units).
func wantWholeStatement(t *testing.T, s *Store, id string, order []string, opening int64) {
	t.Helper()
	for _, limit := range []int{1, 7, 100} {
		got := walk(t, s, id, StatementQuery{Limit: limit})
		if !slices.Equal(ids(got), order) {
			t.Fatalf("limit %d: %d entries, not the ledger's %d in reverse", limit, len(got), len(order))
		}
		bal := opening
		for i := len(got) - 1; i >= 0; i-- {
			bal += got[i].SignedAmount().Minor
			if *got[i].BalanceAfter != bal {
				t.Fatalf("limit %d, entry %d: balance after %d, running sum %d", limit, i, *got[i].BalanceAfter, bal)
			}
		}
	}
}

func ids(entries []StatementEntry) []string {
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = e.TransferID
	}
	return out
}

// TestStatementPagesBackToTheFirstTransfer: following Next from the newest
// page reaches the account's first transfer, every transfer exactly once,
// in the reverse of the order the ledger applied them (transfers of one
// batch, made in the same microsecond, included), each line's balance
// the one right after it.
func TestStatementPagesBackToTheFirstTransfer(t *testing.T) {
	s, rdb := newTestStore(t)
	open(t, s, "A", "EUR", "100.00")
	open(t, s, "B", "EUR", "100.00")
	order := transferMany(t, s, rdb, 250)
	slices.Reverse(order)
	wantWholeStatement(t, s, "A", order, 10000)
}

// TestStatementRangeIsInclusive: from and to select exactly the transfers
// whose time is inside, both ends included, paged like the whole.
func TestStatementRangeIsInclusive(t *testing.T) {
	s, rdb := newTestStore(t)
	open(t, s, "A", "EUR", "100.00")
	open(t, s, "B", "EUR", "100.00")
	transferMany(t, s, rdb, 120)
	all := walk(t, s, "A", StatementQuery{Limit: 100})
	from, to := all[90].CreatedAt, all[20].CreatedAt // newest first: all[90] is older
	var want []string
	for _, e := range all {
		if !e.CreatedAt.Before(from) && !e.CreatedAt.After(to) {
			want = append(want, e.TransferID)
		}
	}
	if len(want) < 71 {
		t.Fatalf("the range holds %d transfers, want at least 71", len(want))
	}
	if got := ids(walk(t, s, "A", StatementQuery{Limit: 9, From: from, To: to})); !slices.Equal(got, want) {
		t.Fatalf("range [%v, %v]: %d transfers, want %d", from, to, len(got), len(want))
	}
	if got := walk(t, s, "A", StatementQuery{Limit: 10, To: all[len(all)-1].CreatedAt.Add(-time.Microsecond)}); len(got) != 0 {
		t.Fatalf("before the first transfer: %d entries", len(got))
	}
}

// TestStatementListsMoveIntoTheHistory: a statement kept as a list (before
// the history) reads the same, is moved on its first read, and transfers
// made after the upgrade come before it.
func TestStatementListsMoveIntoTheHistory(t *testing.T) {
	s, rdb := newTestStore(t)
	ctx := context.Background()
	open(t, s, "A", "EUR", "100.00")
	open(t, s, "B", "EUR", "100.00")
	old := transferMany(t, s, rdb, 30)
	slices.Reverse(old) // newest first, as the list held them
	if err := rdb.Del(ctx, historyKey("A"), linesKey("A")).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.RPush(ctx, statementKey("A"), old).Err(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.transferText(ctx, textRequest{From: "A", To: "B", Amount: "1"}, testMax); err != nil {
		t.Fatal(err)
	}
	got := ids(walk(t, s, "A", StatementQuery{Limit: 8}))
	if len(got) != 31 || !slices.Equal(got[1:], old) {
		t.Fatalf("after the move: %d entries %v, want the new one then %v", len(got), got, old)
	}
	if n, _ := rdb.Exists(ctx, statementKey("A")).Result(); n != 0 {
		t.Fatal("the list is still there")
	}
}

// TestStatementCursorIsBound: a cursor opens only for the principal and
// account it was sealed for; an account list cursor, an edited one or
// another's is refused as not issued, naming the parameter.
func TestStatementCursorIsBound(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	c, err := s.SealStatementCursor(ctx, "alice", mustAccount("1001"), Position{at: 1234})
	if err != nil {
		t.Fatal(err)
	}
	if p, err := s.OpenStatementCursor(ctx, "alice", mustAccount("1001"), c); err != nil || p.at != 1234 {
		t.Fatalf("own cursor: %v %v", p, err)
	}
	list, _ := s.SealCursor(ctx, "alice", mustAccount("1001"))
	edited := []byte(c)
	edited[len(edited)/2] ^= 1
	for name, try := range map[string][3]string{
		"another person":   {"mallory", "1001", c},
		"another account":  {"alice", "2002", c},
		"the shifted pair": {"alice1", "001", c},
		"a list cursor":    {"alice", "1001", list},
		"edited":           {"alice", "1001", string(edited)},
		"not base64":       {"alice", "1001", "!!"},
	} {
		_, err := s.OpenStatementCursor(ctx, try[0], mustAccount(try[1]), try[2])
		var fe *facade.Error
		if !errors.As(err, &fe) || fe.Code != facade.ErrBadParameter.Code || fe.Invalid[0].Parameter != "cursor" || fe.Invalid[0].Reason != facade.ReasonNotIssued {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// BenchmarkStatementPage reads a page of 100 from an account of 100,000
// transfers: the newest, one in the middle, and the one holding the first
// transfer, in the same run, from each structure a history may be in: the
// stream (lines.go: XREVRANGE from the cursor's entry), the sorted set
// kept before it (ZREVRANGEBYSCORE from the cursor's score), and, for the
// record, the list before that (LRANGE at an offset, then the same
// records: Redis skips through a list by whole packed nodes, so at this
// size it costs about the same too; what it cannot do is start a date
// range anywhere without a walk). Figures: docs/performance.md.
//
//	go test -run '^$' -bench StatementPage ./accounts
func BenchmarkStatementPage(b *testing.B) {
	const n, limit = 100_000, 100
	s, rdb := newTestStore(b)
	ctx := context.Background()
	for _, id := range []string{"A", "H", "B"} {
		open(b, s, id, "EUR", "0")
	}
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	at := func(i int) int64 { return start + int64(i)*300_000_000 } // every five minutes: a year of a busy account
	for lo := 0; lo < n; lo += 1000 {
		_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i := lo; i < lo+1000; i++ {
				tid := fmt.Sprintf("t%06d", i)
				p.HSet(ctx, transferKey(tid), "from", "B", "to", "A", "amount", "1", "currency", "EUR",
					"exponent", "2", "created", at(i), "ref", "", "from_after", "0", "to_after", "0")
				p.XAdd(ctx, &redis.XAddArgs{Stream: linesKey("A"), ID: strconv.FormatInt(at(i), 10) + "-0", Values: []string{"t", tid}})
				p.ZAdd(ctx, historyKey("H"), redis.Z{Score: float64(at(i)), Member: tid})
				p.LPush(ctx, "bench:list", tid)
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	for _, c := range []struct {
		name   string
		before int // the page starts after the line of this transfer; -1: the newest
		offset int64
	}{
		{"newest", -1, 0},
		{"middle", n / 2, n / 2},
		{"first", limit - 1, n - limit + 1},
	} {
		for _, h := range []struct {
			name, account string
			at            func(int) *Position
		}{
			{"lines", "A", func(i int) *Position { return &Position{at: at(i), seq: 1} }},
			{"history", "H", func(i int) *Position { return &Position{at: at(i)} }},
		} {
			var before *Position
			if c.before >= 0 {
				before = h.at(c.before)
			}
			b.Run(h.name+"/"+c.name, func(b *testing.B) {
				for b.Loop() {
					page, err := s.Statement(ctx, mustAccount(h.account), StatementQuery{Limit: limit, Before: before})
					if err != nil || len(page.Entries) == 0 {
						b.Fatal(err)
					}
				}
			})
		}
		b.Run("list/"+c.name, func(b *testing.B) {
			for b.Loop() {
				tids, err := rdb.LRange(ctx, "bench:list", c.offset, c.offset+limit-1).Result()
				if err != nil {
					b.Fatal(err)
				}
				if _, err := s.statementEntries(ctx, "A", tids); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// FuzzStatementCursor: a statement cursor opens only unchanged, for the
// principal and account it was sealed for; any other text, any edit of a
// sealed one, and any other principal or account is refused as not
// issued, never a panic or another position.
func FuzzStatementCursor(f *testing.F) {
	s, _ := newTestStore(f)
	ctx := context.Background()
	sealed, err := s.SealStatementCursor(ctx, "alice", mustAccount("1001"), Position{at: 1_700_000_000_000_000})
	if err != nil {
		f.Fatal(err)
	}
	f.Add("alice", "1001", sealed, -1)
	f.Add("alice", "1001", sealed, 3)
	f.Add("alice", "1001", sealed, len(sealed)-1) // the last character: its spare bits must count
	f.Add("alic", "e1001", sealed, -1)
	f.Add("alice", "1001", "", -1)
	f.Add("bob", "1001", "not a cursor", -1)
	f.Fuzz(func(t *testing.T, principal, account, cursor string, flip int) {
		if cursor == "" {
			cursor = sealed
		}
		if flip >= 0 && flip < len(cursor) {
			b := []byte(cursor)
			b[flip] ^= 0x01
			cursor = string(b)
		}
		id, err := facade.ParseAccountID(account)
		if err != nil {
			return // refused before any cursor is opened
		}
		p, err := s.OpenStatementCursor(ctx, principal, id, cursor)
		mine := cursor == sealed && principal == "alice" && account == "1001"
		switch {
		case mine && (err != nil || p.at != 1_700_000_000_000_000):
			t.Fatalf("the sealed cursor did not open: %v %v", p, err)
		case !mine && err == nil:
			t.Fatalf("(%q, %q, %q) opened as %v", principal, account, cursor, p)
		case !mine && !errors.Is(err, facade.ErrBadParameter):
			t.Fatalf("(%q, %q, %q): %v", principal, account, cursor, err)
		}
	})
}
