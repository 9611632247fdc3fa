package accounts

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/internal/testkit/testredis"
)

func TestCreateAndGet(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	when := time.Date(2024, 5, 1, 12, 0, 0, 123456000, time.UTC)
	created, err := s.Create(ctx, Account{ID: mustAccount("1001"), Owner: "alice", Currency: eur, Balance: 25000, CreatedAt: when})
	if err != nil || !created {
		t.Fatalf("Create = %v, %v", created, err)
	}
	got, err := s.getText(ctx, "1001")
	if err != nil {
		t.Fatal(err)
	}
	want := Account{ID: mustAccount("1001"), Owner: "alice", Currency: eur, Balance: 25000, CreatedAt: when}
	if got != want {
		t.Fatalf("Get = %+v\nwant  %+v", got, want)
	}
	if s := got.BalanceAmount().String(); s != "250.00" {
		t.Fatalf("balance formats as %s", s)
	}
}

func TestGetUnknownAccountIsNotFound(t *testing.T) {
	s, _ := newTestStore(t)
	_, err := s.getText(context.Background(), "nobody")
	wantError(t, err, facade.ErrNotFound)
	_, err = s.getText(context.Background(), "../etc")
	wantError(t, err, facade.ErrBadIdentifier)
}

func TestSeedNeverOverwritesABalance(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	open(t, s, "1001", "EUR", "250.00")
	open(t, s, "2002", "EUR", "0")
	if _, _, err := s.transferText(ctx, textRequest{From: "1001", To: "2002", Amount: "50"}, testMax); err != nil {
		t.Fatal(err)
	}
	created, err := s.Seed(ctx, SeedAccount{ID: "1001", Owner: "mallory", Currency: "USD", Balance: "999.00"})
	if err != nil || created {
		t.Fatalf("second seed = %v, %v; want not created", created, err)
	}
	a, _ := s.getText(ctx, "1001")
	if a.Balance != 20000 || a.Owner != "owner-1001" || a.Currency != eur {
		t.Fatalf("after re-seed: %+v; want untouched 200.00 EUR of owner-1001", a)
	}
}

func TestSeedRefusesBadEntries(t *testing.T) {
	s, rdb := newTestStore(t)
	ctx := context.Background()
	cases := []struct {
		entry SeedAccount
		want  *facade.Error
	}{
		{SeedAccount{ID: "1", Owner: "o", Currency: "EUR", Balance: "250.001"}, facade.ErrBadAmount},
		{SeedAccount{ID: "1", Owner: "o", Currency: "EUR", Balance: "-1"}, facade.ErrBadAmount},
		{SeedAccount{ID: "1", Owner: "o", Currency: "JPY", Balance: "1.5"}, facade.ErrBadAmount},
		{SeedAccount{ID: "1", Owner: "o", Currency: "XYZ", Balance: "1"}, facade.ErrUnknownCurrency},
		{SeedAccount{ID: "a b", Owner: "o", Currency: "EUR", Balance: "1"}, facade.ErrBadIdentifier},
		{SeedAccount{ID: "", Owner: "o", Currency: "EUR", Balance: "1"}, facade.ErrBadIdentifier},
		{SeedAccount{ID: "1", Owner: "", Currency: "EUR", Balance: "1"}, facade.ErrBadIdentifier},
	}
	for _, c := range cases {
		_, err := s.Seed(ctx, c.entry)
		wantError(t, err, c.want)
	}
	if _, err := s.Create(ctx, Account{ID: mustAccount("x"), Currency: Currency{Code: "EUR", Exponent: 3}}); err == nil {
		t.Fatal("Create accepted EUR with a wrong exponent")
	}
	if n, _ := rdb.DBSize(ctx).Result(); n != 0 {
		t.Fatalf("refused seeds wrote %d keys", n)
	}
}

func TestStatementNewestFirstWithDirections(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	open(t, s, "A", "EUR", "100.00")
	open(t, s, "B", "EUR", "0")
	open(t, s, "C", "EUR", "0")
	var ids []string
	for _, r := range []textRequest{
		{From: "A", To: "B", Amount: "10"},
		{From: "B", To: "C", Amount: "2.5"},
		{From: "A", To: "C", Amount: "0.01"},
	} {
		tr, _, err := s.transferText(ctx, r, testMax)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, tr.ID)
	}
	got, err := newest(s, "B", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("B has %d entries, want 2", len(got))
	}
	first, second := got[0], got[1]
	if first.TransferID != ids[1] || first.Direction != Debit || first.Counterparty != "C" ||
		first.Amount != 250 || first.SignedAmount().String() != "-2.50" {
		t.Fatalf("newest entry of B = %+v", first)
	}
	if second.TransferID != ids[0] || second.Direction != Credit || second.Counterparty != "A" ||
		second.SignedAmount().String() != "10.00" || second.Currency != eur {
		t.Fatalf("oldest entry of B = %+v", second)
	}
	if first.CreatedAt.Before(second.CreatedAt) || time.Since(first.CreatedAt) > time.Minute {
		t.Fatalf("created_at out of order or not now: %v, %v", first.CreatedAt, second.CreatedAt)
	}
	limited, _ := newest(s, "A", 1)
	if len(limited) != 1 || limited[0].TransferID != ids[2] {
		t.Fatalf("Statement(A, 1) = %+v; want only the newest", limited)
	}
}

func TestStatementOfEmptyAndMissingAccounts(t *testing.T) {
	s, _ := newTestStore(t)
	open(t, s, "A", "EUR", "1")
	got, err := newest(s, "A", 10)
	if err != nil || got == nil || len(got) != 0 {
		t.Fatalf("empty statement = %#v, %v; want empty non-nil", got, err)
	}
	_, err = newest(s, "nobody", 10)
	wantError(t, err, facade.ErrNotFound)
	for _, limit := range []int{0, -1, MaxStatementLimit + 1} {
		_, err = newest(s, "A", limit)
		wantError(t, err, facade.ErrBadParameter)
	}
}

// In Redis Cluster a script may only touch keys of one hash slot: every key
// a transfer names must carry the same {tag}, whatever the ids look like.
func TestTransferKeysShareOneHashSlot(t *testing.T) {
	req := textRequest{From: "a.b@c-d_1", To: "Z", Amount: "1", IdempotencyKey: "{other}", Principal: "{x}"}.parsed()
	keys := transferKeys(req, newTransferID())
	keys = append(keys, ledgerKey(), formatKey(), accountKey("q"), historyKey("q"), linesKey("q"), statementKey("q"))
	if len(keys) != 8+6 {
		t.Fatalf("transfer keys = %v", keys)
	}
	for _, k := range keys {
		brace := strings.IndexByte(k, '{')
		end := strings.IndexByte(k[brace+1:], '}')
		if brace < 0 || end < 0 || k[brace+1:brace+1+end] != "money" || !strings.HasPrefix(k, "facade:accounts:") {
			t.Errorf("key %q does not hash on {money} under facade:accounts:", k)
		}
	}
}

// TestAccountsAreStampedByTheStoresClock: an account created without a
// time gets the store's clock's, not the machine's.
func TestAccountsAreStampedByTheStoresClock(t *testing.T) {
	when := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	s := NewStore(testredis.Client(t), Config{Now: func() time.Time { return when }})
	if _, err := s.Seed(context.Background(), SeedAccount{ID: "1", Owner: "o", Currency: "EUR", Balance: "1"}); err != nil {
		t.Fatal(err)
	}
	a, err := s.getText(context.Background(), "1")
	if err != nil || !a.CreatedAt.Equal(when) {
		t.Fatalf("CreatedAt = %v, %v; want %v", a.CreatedAt, err, when)
	}
}

// newest returns the first page of a statement: its newest limit entries.
func newest(s *Store, id string, limit int) ([]StatementEntry, error) {
	page, err := s.Statement(context.Background(), mustAccount(id), StatementQuery{Limit: limit})
	return page.Entries, err
}
