package accounts

import (
	"context"
	"encoding/json"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/internal/testkit/testlog"
	"github.com/facade-dev/facade/internal/testkit/testredis"
)

func TestTransferMovesMoneyAndRecordsIt(t *testing.T) {
	s, rdb := newTestStore(t)
	ctx := context.Background()
	open(t, s, "1001", "EUR", "250.00")
	open(t, s, "2002", "EUR", "10.00")
	createdBefore := transfersCounted(s, "created")

	tr, replayed, err := s.transferText(ctx, textRequest{From: "1001", To: "2002", Amount: "5.5", Principal: "alice"}, testMax)
	if err != nil || replayed {
		t.Fatalf("Transfer = %v, replayed=%v", err, replayed)
	}
	if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(tr.ID) {
		t.Fatalf("transfer id %q is not 128 random bits in hex", tr.ID)
	}
	if tr.From != "1001" || tr.To != "2002" || tr.Amount != 550 || tr.Currency != eur ||
		time.Since(tr.CreatedAt) > time.Minute || tr.CreatedAt.Location() != time.UTC {
		t.Fatalf("transfer = %+v", tr)
	}
	if got := balances(t, s, "1001", "2002"); !slices.Equal(got, []int64{24450, 1550}) {
		t.Fatalf("balances = %v; want [24450 1550]", got)
	}
	entries, err := rdb.XRange(ctx, ledgerKey(), "-", "+").Result()
	if err != nil || len(entries) != 1 {
		t.Fatalf("ledger = %v, %v; want one entry", entries, err)
	}
	want := map[string]any{"transfer": tr.ID, "from": "1001", "to": "2002", "amount": "550",
		"currency": "EUR", "created": entries[0].Values["created"]}
	if !mapsEqual(entries[0].Values, want) {
		t.Fatalf("ledger entry = %v; want %v", entries[0].Values, want)
	}
	if got := transfersCounted(s, "created"); got != createdBefore+1 {
		t.Fatalf("created metric moved by %v; want 1", got-createdBefore)
	}
	body, _ := json.Marshal(map[string]any{"amount": tr.AmountValue(), "currency": tr.Currency})
	if string(body) != `{"amount":5.50,"currency":"EUR"}` {
		t.Fatalf("JSON = %s", body)
	}
}

func TestSmallCentsAddUpExactly(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	open(t, s, "A", "EUR", "1.00")
	open(t, s, "B", "EUR", "0")
	for _, amt := range []string{"0.1", "0.20"} {
		if _, _, err := s.transferText(ctx, textRequest{From: "A", To: "B", Amount: amt}, testMax); err != nil {
			t.Fatal(err)
		}
	}
	b, _ := s.getText(ctx, "B")
	out, _ := json.Marshal(map[string]any{"balance": b.BalanceAmount()})
	if string(out) != `{"balance":0.30}` {
		t.Fatalf("0.1 + 0.2 EUR = %s; want 0.30", out)
	}
}

func TestTransferRefusalsMoveNothing(t *testing.T) {
	s, rdb := newTestStore(t)
	ctx := context.Background()
	open(t, s, "A", "EUR", "10.00")
	open(t, s, "B", "EUR", "0")
	open(t, s, "U", "USD", "10.00")
	cases := []struct {
		name string
		req  textRequest
		want *facade.Error
	}{
		{"same account", textRequest{From: "A", To: "A", Amount: "1"}, facade.ErrSameAccount},
		{"one cent too much", textRequest{From: "A", To: "B", Amount: "10.01"}, facade.ErrInsufficientFunds},
		{"empty source", textRequest{From: "B", To: "A", Amount: "0.01"}, facade.ErrInsufficientFunds},
		{"currency mismatch", textRequest{From: "A", To: "U", Amount: "1"}, facade.ErrCurrencyMismatch},
		{"missing from", textRequest{From: "ghost", To: "A", Amount: "1"}, facade.ErrNotFound},
		{"missing to", textRequest{From: "A", To: "ghost", Amount: "1"}, facade.ErrNotFound},
		{"malformed id", textRequest{From: "A/../B", To: "B", Amount: "1"}, facade.ErrBadIdentifier},
		{"key too long", textRequest{From: "A", To: "B", Amount: "1", IdempotencyKey: strings.Repeat("k", 256)}, facade.ErrBadIdempotencyKey},
		{"key with space", textRequest{From: "A", To: "B", Amount: "1", IdempotencyKey: "a b"}, facade.ErrBadIdempotencyKey},
		{"key not ascii", textRequest{From: "A", To: "B", Amount: "1", IdempotencyKey: "clé"}, facade.ErrBadIdempotencyKey},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := s.transferText(ctx, c.req, testMax)
			wantError(t, err, c.want)
		})
	}
	if got := balances(t, s, "A", "B", "U"); !slices.Equal(got, []int64{1000, 0, 1000}) {
		t.Fatalf("balances after refusals = %v", got)
	}
	if n := ledgerLen(t, rdb); n != 0 {
		t.Fatalf("refusals wrote %d ledger entries", n)
	}
	// The exact balance goes through and leaves zero.
	if _, _, err := s.transferText(ctx, textRequest{From: "A", To: "B", Amount: "10.00"}, testMax); err != nil {
		t.Fatalf("transfer of the exact balance: %v", err)
	}
	if got := balances(t, s, "A", "B"); !slices.Equal(got, []int64{0, 1000}) {
		t.Fatalf("balances = %v; want [0 1000]", got)
	}
}

func TestTransferRefusesBadAmountsBeforeMovingMoney(t *testing.T) {
	s, rdb := newTestStore(t)
	ctx := context.Background()
	open(t, s, "E1", "EUR", "5000000.00")
	open(t, s, "E2", "EUR", "0")
	open(t, s, "J1", "JPY", "5000000")
	open(t, s, "J2", "JPY", "0")
	open(t, s, "K1", "KWD", "1.000")
	open(t, s, "K2", "KWD", "0")
	type attempt struct{ from, to, amount string }
	var attempts []attempt
	for _, a := range badAmounts {
		attempts = append(attempts, attempt{"E1", "E2", a}, attempt{"J1", "J2", a})
	}
	attempts = append(attempts,
		attempt{"E1", "E2", "1.001"}, attempt{"E1", "E2", "5.000"},
		attempt{"J1", "J2", "5.5"}, attempt{"J1", "J2", "5.0"}, attempt{"J1", "J2", "0.01"},
		attempt{"K1", "K2", "0.0001"},
	)
	for _, a := range attempts {
		_, _, err := s.transferText(ctx, textRequest{From: a.from, To: a.to, Amount: a.amount, IdempotencyKey: "k"}, testMax)
		wantError(t, err, facade.ErrBadAmount)
	}
	if got := balances(t, s, "E1", "E2", "J1", "J2", "K1", "K2"); !slices.Equal(got, []int64{500_000_000, 0, 5_000_000, 0, 1000, 0}) {
		t.Fatalf("balances after refused amounts = %v", got)
	}
	if n := ledgerLen(t, rdb); n != 0 {
		t.Fatalf("refused amounts wrote %d ledger entries", n)
	}
	// The boundaries that are allowed.
	for _, a := range []attempt{{"E1", "E2", "1000000"}, {"E1", "E2", "1000000.00"}, {"J1", "J2", "5"}, {"K1", "K2", "0.001"}} {
		if _, _, err := s.transferText(ctx, textRequest{From: a.from, To: a.to, Amount: a.amount}, testMax); err != nil {
			t.Fatalf("transfer %v: %v", a, err)
		}
	}
	if got := balances(t, s, "E2", "J2", "K2"); !slices.Equal(got, []int64{200_000_000, 5, 1}) {
		t.Fatalf("balances = %v", got)
	}
}

func TestIdempotentReplayReturnsTheFirstAnswer(t *testing.T) {
	s, rdb := newTestStore(t)
	ctx := context.Background()
	open(t, s, "A", "EUR", "10.00")
	open(t, s, "B", "EUR", "0")
	req := textRequest{From: "A", To: "B", Amount: "4", IdempotencyKey: "order-42", Principal: "alice"}
	first, replayed, err := s.transferText(ctx, req, testMax)
	if err != nil || replayed {
		t.Fatalf("first = %v, replayed=%v", err, replayed)
	}
	// Same request, also written "4.00": the first answer, no money moved,
	// even though the source could not pay it again now.
	req.Amount = "4.00"
	for range 3 {
		again, replayed, err := s.transferText(ctx, req, testMax)
		if err != nil || !replayed || again != first {
			t.Fatalf("replay = %+v, replayed=%v, %v\nwant %+v", again, replayed, err, first)
		}
	}
	if _, _, err := s.transferText(ctx, textRequest{From: "A", To: "B", Amount: "6"}, testMax); err != nil {
		t.Fatal(err)
	}
	again, replayed, err := s.transferText(ctx, req, testMax)
	if err != nil || !replayed || again != first {
		t.Fatalf("replay after the source emptied = %+v, %v, %v", again, replayed, err)
	}
	if got := balances(t, s, "A", "B"); !slices.Equal(got, []int64{0, 1000}) {
		t.Fatalf("balances = %v; want [0 1000]", got)
	}
	if n := ledgerLen(t, rdb); n != 2 {
		t.Fatalf("ledger has %d entries; want 2", n)
	}
	ttl, _ := rdb.TTL(ctx, idempotencyKey("alice", "order-42")).Result()
	if ttl <= 23*time.Hour || ttl > 24*time.Hour {
		t.Fatalf("idempotency record kept for %v; want 24h", ttl)
	}
}

func TestIdempotencyKeyReusedForAnotherRequest(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	open(t, s, "A", "EUR", "10.00")
	open(t, s, "B", "EUR", "0")
	open(t, s, "C", "EUR", "0")
	if _, _, err := s.transferText(ctx, textRequest{From: "A", To: "B", Amount: "1", IdempotencyKey: "k1", Principal: "alice"}, testMax); err != nil {
		t.Fatal(err)
	}
	for _, other := range []textRequest{
		{From: "A", To: "B", Amount: "2", IdempotencyKey: "k1", Principal: "alice"},
		{From: "A", To: "C", Amount: "1", IdempotencyKey: "k1", Principal: "alice"},
		{From: "B", To: "A", Amount: "1", IdempotencyKey: "k1", Principal: "alice"},
	} {
		_, _, err := s.transferText(ctx, other, testMax)
		wantError(t, err, facade.ErrIdempotencyReuse)
	}
	// Keys are per principal: bob's "k1" is a new request.
	if _, replayed, err := s.transferText(ctx, textRequest{From: "A", To: "B", Amount: "1", IdempotencyKey: "k1", Principal: "bob"}, testMax); err != nil || replayed {
		t.Fatalf("bob's k1 = %v, replayed=%v; want a new transfer", err, replayed)
	}
	// A refused attempt does not use up its key.
	_, _, err := s.transferText(ctx, textRequest{From: "C", To: "A", Amount: "1", IdempotencyKey: "k2", Principal: "alice"}, testMax)
	wantError(t, err, facade.ErrInsufficientFunds)
	if _, replayed, err := s.transferText(ctx, textRequest{From: "A", To: "C", Amount: "1", IdempotencyKey: "k2", Principal: "alice"}, testMax); err != nil || replayed {
		t.Fatalf("k2 after a refusal = %v, replayed=%v", err, replayed)
	}
	if got := balances(t, s, "A", "B", "C"); !slices.Equal(got, []int64{700, 200, 100}) {
		t.Fatalf("balances = %v; want [700 200 100]", got)
	}
}

func TestConcurrentFirstUsesOfOneKeyMoveMoneyOnce(t *testing.T) {
	s, rdb := newTestStore(t)
	ctx := context.Background()
	open(t, s, "A", "EUR", "1000.00")
	open(t, s, "B", "EUR", "0")
	const callers = 50
	results := make([]Transfer, callers)
	replays := make([]bool, callers)
	errs := make([]error, callers)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range callers {
		wg.Go(func() {
			<-start
			results[i], replays[i], errs[i] = s.transferText(ctx,
				textRequest{From: "A", To: "B", Amount: "7.77", IdempotencyKey: "once", Principal: "alice"}, testMax)
		})
	}
	close(start)
	wg.Wait()
	fresh := 0
	for i := range callers {
		if errs[i] != nil {
			t.Fatalf("caller %d: %v", i, errs[i])
		}
		if results[i] != results[0] {
			t.Fatalf("caller %d got %+v; caller 0 got %+v", i, results[i], results[0])
		}
		if !replays[i] {
			fresh++
		}
	}
	if fresh != 1 {
		t.Fatalf("%d callers saw a fresh transfer; want exactly 1", fresh)
	}
	if got := balances(t, s, "A", "B"); !slices.Equal(got, []int64{99223, 777}) {
		t.Fatalf("balances = %v; want one transfer of 7.77", got)
	}
	if n := ledgerLen(t, rdb); n != 1 {
		t.Fatalf("ledger has %d entries; want 1", n)
	}
}

// go-redis resends a command whose reply was lost on the wire. The script
// must recognise its own transfer id and not move the money again.
func TestResentScriptCallMovesMoneyOnce(t *testing.T) {
	s, rdb := newTestStore(t)
	ctx := context.Background()
	open(t, s, "A", "EUR", "10.00")
	open(t, s, "B", "EUR", "0")
	req := textRequest{From: "A", To: "B", Amount: "3"}.parsed()
	tid := newTransferID()
	var answers []Transfer
	for range 2 {
		call := &transferCall{keys: transferKeys(req, tid), args: transferArgs(req, tid)}
		s.applyTransfers(ctx, []*transferCall{call})
		if call.err != nil {
			t.Fatal(call.err)
		}
		tr, _, err := decodeTransfer(req, call.reply)
		if err != nil {
			t.Fatal(err)
		}
		answers = append(answers, tr)
	}
	if answers[0] != answers[1] || answers[0].ID != tid || answers[0].Amount != 300 {
		t.Fatalf("resent call answered %+v, first %+v; want the same transfer %s of 3.00", answers[1], answers[0], tid)
	}
	if got := balances(t, s, "A", "B"); !slices.Equal(got, []int64{700, 300}) {
		t.Fatalf("balances = %v; want one transfer of 3.00", got)
	}
	if n := ledgerLen(t, rdb); n != 1 {
		t.Fatalf("ledger has %d entries; want 1", n)
	}
}

func TestCreditThatWouldOverflowIsRefused(t *testing.T) {
	s, rdb := newTestStore(t)
	ctx := context.Background()
	const maxInt64 = int64(^uint64(0) >> 1)
	if _, err := s.Create(ctx, Account{ID: mustAccount("rich"), Currency: eur, Balance: maxInt64}); err != nil {
		t.Fatal(err)
	}
	open(t, s, "A", "EUR", "1.00")
	_, _, err := s.transferText(ctx, textRequest{From: "A", To: "rich", Amount: "0.01"}, testMax)
	wantError(t, err, facade.ErrBalanceLimit)
	if got := balances(t, s, "A", "rich"); !slices.Equal(got, []int64{100, maxInt64}) {
		t.Fatalf("balances = %v; nothing may move", got)
	}
	if n := ledgerLen(t, rdb); n != 0 {
		t.Fatalf("ledger has %d entries; want 0", n)
	}
}

func TestEveryTransferAttemptIsAudited(t *testing.T) {
	rdb := testredis.Client(t)
	var buf testlog.Buffer
	s := NewStore(rdb, Config{Log: slog.New(slog.NewJSONHandler(&buf, nil))})
	ctx := context.Background()
	open(t, s, "A", "EUR", "1.00")
	open(t, s, "B", "EUR", "0")
	ok, _, _ := s.transferText(ctx, textRequest{From: "A", To: "B", Amount: "0.50", Principal: "alice"}, testMax)
	_, _, _ = s.transferText(ctx, textRequest{From: "A", To: "B", Amount: "9", Principal: "alice"}, testMax)
	_, _, _ = s.transferText(ctx, textRequest{From: "A", To: "B", Amount: "1e3", Principal: "mallory"}, testMax)
	keyed := textRequest{From: "A", To: "B", Amount: "0.10", IdempotencyKey: "k1", Principal: "alice"}
	_, _, _ = s.transferText(ctx, keyed, testMax)
	_, _, _ = s.transferText(ctx, keyed, testMax)
	var lines []map[string]any
	for line := range strings.Lines(buf.String()) {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		lines = append(lines, m)
	}
	want := []struct {
		principal, amount, outcome string
		keyed                      bool
	}{
		{"alice", "0.50", "created", false}, {"alice", "9", "insufficient_funds", false}, {"mallory", "1e3", "bad_amount", false},
		{"alice", "0.10", "created", true}, {"alice", "0.10", "replayed", true},
	}
	if len(lines) != len(want) {
		t.Fatalf("%d audit lines; want %d:\n%s", len(lines), len(want), buf.String())
	}
	for i, w := range want {
		l := lines[i]
		if l["audit"] != true || l["principal"] != w.principal || l["from"] != "A" || l["to"] != "B" ||
			l["amount"] != w.amount || l["outcome"] != w.outcome || l["idempotency_key"] != w.keyed {
			t.Errorf("audit line %d = %v; want %+v", i, l, w)
		}
	}
	if lines[0]["transfer_id"] != ok.ID {
		t.Errorf("audit line of the created transfer lacks its id: %v", lines[0])
	}
}

func mapsEqual(a, b map[string]any) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// transfersCounted reads the transfers metric for one outcome.
func transfersCounted(s *Store, outcome string) float64 {
	var m dto.Metric
	_ = s.metrics.Transfers.WithLabelValues(outcome).Write(&m)
	return m.GetCounter().GetValue()
}

// TestAuditClipsOnlyWhatIsTooLong: the audit line shows an id of the
// longest valid length (64 bytes) whole, and clips only text past 64
// bytes (an amount is whatever the URL held), marking the cut with "...".
func TestAuditClipsOnlyWhatIsTooLong(t *testing.T) {
	var buf testlog.Buffer
	s := NewStore(testredis.Client(t), Config{Log: slog.New(slog.NewJSONHandler(&buf, nil))})
	longest, tooLong := strings.Repeat("a", 64), strings.Repeat("9", 65)
	_, _, _ = s.transferText(context.Background(), textRequest{From: longest, To: "B", Amount: tooLong, Principal: "alice"}, testMax)
	var line map[string]any
	if err := json.Unmarshal([]byte(buf.String()), &line); err != nil {
		t.Fatalf("audit line %q: %v", buf.String(), err)
	}
	if line["from"] != longest || line["amount"] != tooLong[:64]+"..." {
		t.Fatalf("audit from %q, amount %q; want the 64-byte id whole and the amount cut at 64 bytes", line["from"], line["amount"])
	}
}
