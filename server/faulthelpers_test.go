package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/facade-dev/facade/accounts"
	"github.com/facade-dev/facade/auth"
	"github.com/facade-dev/facade/authz"
	"github.com/facade-dev/facade/grades"
	"github.com/facade-dev/facade/server"
)

// The money tests (transfer_fault_test.go, transfer_concurrency_test.go)
// build their own server with the exported API instead of the shared
// harness: the fault test needs a private Redis it can kill, and both need
// an HTTP client that may be used from many goroutines (helpers here return
// errors; they never call t.Fatal).

var moneySecret = []byte("money-tests-secret-that-is-over-32-bytes")

const (
	moneyModelFile = "../model.conf"
	moneyPrincipal = "payer"
)

var moneyEUR, _ = accounts.LookupCurrency("EUR")

// moneyEnv is one server over a Redis chosen by the test, with accounts
// that the principal "payer" may view and move money between.
type moneyEnv struct {
	url     string
	client  *http.Client
	rdb     redis.UniversalClient
	token   string
	ids     []string
	opening map[string]int64 // minor units, as seeded
}

// newMoneyEnv seeds ids with the opening balance (EUR, decimal text) and
// starts a server over rdb behind an httptest listener with the limits of
// server.HTTPServer.
func newMoneyEnv(t *testing.T, rdb redis.UniversalClient, ids []string, opening string) *moneyEnv {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	az, err := authz.New(moneyModelFile, writeMoneyPolicy(t, ids), authz.Config{Log: log})
	if err != nil {
		t.Fatalf("authz: %v", err)
	}
	origins, err := server.NewOrigins([]string{"*"}, []string{"https://app.example"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	tokens, err := auth.NewTokens(ctx, auth.TokenConfig{Secret: moneySecret})
	if err != nil {
		t.Fatal(err)
	}
	store := accounts.NewStore(rdb, accounts.Config{Log: log})
	srv, err := server.New(server.Deps{
		Redis: rdb, Auth: tokens, Authz: az, Grades: grades.NewStore(rdb, grades.Config{Log: log}), Accounts: store,
	}, server.Config{Origins: origins, MaxTransfer: 1_000_000, OpsOnAPI: true, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(srv)
	ts.Config = server.HTTPServer("", srv)
	ts.Listener = server.Listener(ts.Listener)
	ts.Start()
	t.Cleanup(ts.Close)
	tok, err := auth.Mint(moneySecret, moneyPrincipal, "customer", auth.Claims{}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	transport := &http.Transport{MaxIdleConns: 128, MaxIdleConnsPerHost: 128, IdleConnTimeout: 30 * time.Second}
	t.Cleanup(transport.CloseIdleConnections)
	m := &moneyEnv{
		url: ts.URL, client: &http.Client{Transport: transport, Timeout: 20 * time.Second},
		rdb: rdb, token: tok, ids: ids, opening: map[string]int64{},
	}
	for _, id := range ids {
		if _, err := store.Seed(ctx, accounts.SeedAccount{ID: id, Owner: "owner-" + id, Currency: "EUR", Balance: opening}); err != nil {
			t.Fatalf("seed %s: %v", id, err)
		}
		m.opening[id], err = accounts.ParseBalance(opening, moneyEUR)
		if err != nil {
			t.Fatal(err)
		}
	}
	return m
}

// writeMoneyPolicy grants payer view_account and transfer on every id.
func writeMoneyPolicy(t *testing.T, ids []string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("# payer may see and move money between the test accounts\n")
	for _, id := range ids {
		fmt.Fprintf(&b, "p, %s, account:%s, view_account\np, %s, account:%s, transfer\n", moneyPrincipal, id, moneyPrincipal, id)
	}
	path := filepath.Join(t.TempDir(), "policy.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// moneyAnswer is one HTTP answer, body read in full.
type moneyAnswer struct {
	status int
	header http.Header
	body   []byte
}

func (a moneyAnswer) replayed() bool { return a.header.Get("Idempotent-Replayed") == "true" }

// send makes one call as payer. Unsafe methods carry the anti-forgery
// header; key, when not empty, is sent as Idempotency-Key.
func (m *moneyEnv) send(method, path, key string) (moneyAnswer, error) {
	req, err := http.NewRequest(method, m.url+path, nil)
	if err != nil {
		return moneyAnswer{}, err
	}
	req.Header.Set("Authorization", "Bearer "+m.token)
	req.Header.Set("Accept", "application/json")
	if method != http.MethodGet {
		req.Header.Set("X-XSRF-TOKEN", "money-test")
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	res, err := m.client.Do(req)
	if err != nil {
		return moneyAnswer{}, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	return moneyAnswer{status: res.StatusCode, header: res.Header, body: body}, err
}

// transfer asks to move amount (decimal text) from one account to another.
func (m *moneyEnv) transfer(from, to, amount, key string) (moneyAnswer, error) {
	return m.send(http.MethodPost, "/rs/transfer/from/"+from+"/to/"+to+"/amount/"+amount, key)
}

// moneyTransfer is the 201 body of docs/contract.md §5, field for field.
type moneyTransfer struct {
	TransferID string      `json:"transfer_id"`
	From       string      `json:"from_account_id"`
	To         string      `json:"to_account_id"`
	Amount     json.Number `json:"amount"`
	Currency   string      `json:"currency"`
	CreatedAt  string      `json:"created_at"`
}

// decodeMoneyTransfer checks a 201 answer against the request it answered.
func decodeMoneyTransfer(a moneyAnswer, from, to, amount string) (moneyTransfer, error) {
	if ct := a.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		return moneyTransfer{}, fmt.Errorf("201 with Content-Type %q", ct)
	}
	var b moneyTransfer
	dec := json.NewDecoder(strings.NewReader(string(a.body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		return b, fmt.Errorf("201 body %s: %v", a.body, err)
	}
	want, _ := accounts.ParseBalance(amount, moneyEUR)
	got, err := moneyMinor(b.Amount)
	if err != nil || got != want || b.From != from || b.To != to || b.Currency != "EUR" ||
		len(b.TransferID) < 16 || b.CreatedAt == "" {
		return b, fmt.Errorf("201 body %s does not match %s→%s %s", a.body, from, to, amount)
	}
	return b, nil
}

// moneyMinor turns a JSON number written by the service ("-12.34") into
// EUR minor units, exactly.
func moneyMinor(n json.Number) (int64, error) {
	s := string(n)
	neg := strings.HasPrefix(s, "-")
	v, err := accounts.ParseBalance(strings.TrimPrefix(s, "-"), moneyEUR)
	if neg {
		v = -v
	}
	return v, err
}

// moneyProblemKeys are the only members an error body may have: anything else
// would be a place for internals to leak.
var moneyProblemKeys = []string{"code", "detail", "request_id", "status", "title", "type"}

// moneyProblemError says what is wrong with a as an RFC 9457 answer with this
// status and fixed detail sentence, or nil. 503 must carry Retry-After.
func moneyProblemError(a moneyAnswer, status int, detail string) error {
	if a.status != status {
		return fmt.Errorf("status %d, want %d: %s", a.status, status, a.body)
	}
	if ct := a.header.Get("Content-Type"); ct != "application/problem+json" {
		return fmt.Errorf("%d with Content-Type %q", status, ct)
	}
	if s := a.header.Get("Server"); s != "" {
		return fmt.Errorf("%d with a Server header %q", status, s)
	}
	var p map[string]any
	if err := json.Unmarshal(a.body, &p); err != nil {
		return fmt.Errorf("%d body is not JSON: %q", status, a.body)
	}
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if !slices.Equal(keys, moneyProblemKeys) || p["title"] != http.StatusText(status) ||
		p["status"] != float64(status) || p["detail"] != detail || p["type"] != "/problems/"+p["code"].(string) ||
		p["request_id"] == "" || p["request_id"] != a.header.Get("X-Request-ID") {
		return fmt.Errorf("%d problem body %s, want detail %q", status, a.body, detail)
	}
	if status == http.StatusServiceUnavailable {
		if secs, err := strconv.Atoi(a.header.Get("Retry-After")); err != nil || secs < 1 {
			return fmt.Errorf("503 with Retry-After %q", a.header.Get("Retry-After"))
		}
	}
	return nil
}

// moneyInsufficientFunds checks a 422 is the insufficient-funds refusal.
func moneyInsufficientFunds(a moneyAnswer) error {
	return moneyProblemError(a, http.StatusUnprocessableEntity, "The source account has insufficient funds.")
}

// moneyAmount returns an amount of 0.01 to maxCents/100 EUR as URL text.
func moneyAmount(rng *rand.Rand, maxCents int) string {
	c := 1 + rng.IntN(maxCents)
	return fmt.Sprintf("%d.%02d", c/100, c%100)
}

// balance reads GET /rs/account/{id}/balance, in minor units.
func (m *moneyEnv) balance(id string) (int64, error) {
	a, err := m.send(http.MethodGet, "/rs/account/"+id+"/balance", "")
	if err != nil {
		return 0, err
	}
	var b struct {
		AccountID string      `json:"account_id"`
		Balance   json.Number `json:"balance"`
		Currency  string      `json:"currency"`
	}
	if a.status != http.StatusOK || json.Unmarshal(a.body, &b) != nil || b.AccountID != id || b.Currency != "EUR" {
		return 0, fmt.Errorf("balance of %s: %d %s", id, a.status, a.body)
	}
	return moneyMinor(b.Balance)
}

// moneyStatementLine is one entry of GET /rs/account/{id}/transfers.
type moneyStatementLine struct {
	TransferID   string      `json:"transfer_id"`
	Direction    string      `json:"direction"`
	Counterparty string      `json:"counterparty_account_id"`
	Amount       json.Number `json:"amount"`
	Currency     string      `json:"currency"`
}

// statement reads the newest MaxStatementLimit entries of id over HTTP.
func (m *moneyEnv) statement(id string) ([]moneyStatementLine, error) {
	a, err := m.send(http.MethodGet, "/rs/account/"+id+"/transfers?limit="+strconv.Itoa(accounts.MaxStatementLimit), "")
	if err != nil {
		return nil, err
	}
	var s struct {
		AccountID string               `json:"account_id"`
		Transfers []moneyStatementLine `json:"transfers"`
	}
	if a.status != http.StatusOK || json.Unmarshal(a.body, &s) != nil || s.AccountID != id {
		return nil, fmt.Errorf("statement of %s: %d %s", id, a.status, a.body)
	}
	return s.Transfers, nil
}

// ledgerTransferIDs returns the transfer id of every ledger entry, in the
// order the transfers were applied.
func ledgerTransferIDs(t *testing.T, rdb redis.UniversalClient) []string {
	t.Helper()
	entries, err := rdb.XRange(context.Background(), "facade:accounts:{money}:ledger", "-", "+").Result()
	if err != nil {
		t.Fatalf("read ledger: %v", err)
	}
	ids := make([]string, len(entries))
	for i, e := range entries {
		ids[i], _ = e.Values["transfer"].(string)
	}
	return ids
}

// auditMoney checks the end state against what callers were told. book
// holds every distinct transfer that answered 201, by transfer id.
//
//   - the ledger has exactly one entry per transfer in book, no other;
//   - applying the ledger in order to the opening balances never takes a
//     balance below zero and ends at the balances GET reports;
//   - the total is unchanged to the cent;
//   - each statement lists exactly the account's transfers in book (the
//     newest MaxStatementLimit when there are more), with the right
//     direction, counterparty and signed amount, and walking it back from
//     the final balance never goes below zero.
//
// It returns the final balances and whether every statement was complete.
func (m *moneyEnv) auditMoney(t *testing.T, book map[string]moneyTransfer) (map[string]int64, bool) {
	t.Helper()
	running := m.replayLedger(t, book)
	final := map[string]int64{}
	var openTotal, total int64
	for _, id := range m.ids {
		b, err := m.balance(id)
		if err != nil {
			t.Fatal(err)
		}
		final[id] = b
		openTotal += m.opening[id]
		total += b
		if b < 0 || b != running[id] {
			t.Errorf("balance of %s is %d cents; the ledger gives %d", id, b, running[id])
		}
	}
	if total != openTotal {
		t.Errorf("total is %d cents, was %d: money appeared or vanished", total, openTotal)
	}
	complete := true
	for _, id := range m.ids {
		complete = m.auditStatement(t, id, final[id], book) && complete
	}
	return final, complete
}

// replayLedger applies the ledger's transfers, as callers were told of
// them, to the opening balances and returns the result.
func (m *moneyEnv) replayLedger(t *testing.T, book map[string]moneyTransfer) map[string]int64 {
	t.Helper()
	ledger := ledgerTransferIDs(t, m.rdb)
	if len(ledger) != len(book) {
		t.Errorf("ledger holds %d entries; %d distinct transfers answered 201", len(ledger), len(book))
	}
	running := maps.Clone(m.opening)
	seen := map[string]bool{}
	for i, tid := range ledger {
		b, ok := book[tid]
		switch {
		case seen[tid]:
			t.Errorf("ledger entry %d repeats transfer %s", i, tid)
			continue
		case !ok:
			t.Errorf("ledger entry %d is transfer %q, which no caller was told of", i, tid)
			continue
		}
		seen[tid] = true
		amount, _ := moneyMinor(b.Amount)
		running[b.From] -= amount
		running[b.To] += amount
		if running[b.From] < 0 {
			t.Errorf("ledger entry %d takes %s to %d cents", i, b.From, running[b.From])
		}
	}
	return running
}

// auditStatement checks id's statement (see auditMoney) and reports
// whether it held all of the account's transfers.
func (m *moneyEnv) auditStatement(t *testing.T, id string, final int64, book map[string]moneyTransfer) bool {
	t.Helper()
	lines, err := m.statement(id)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	before := final
	for _, l := range lines {
		if listed[l.TransferID] {
			t.Errorf("statement of %s lists %s twice", id, l.TransferID)
		}
		listed[l.TransferID] = true
		if err := moneyLineError(id, l, book); err != nil {
			t.Error(err)
			continue
		}
		signed, _ := moneyMinor(l.Amount)
		before -= signed
		if before < 0 {
			t.Errorf("statement of %s: before %s the balance was %d cents", id, l.TransferID, before)
		}
	}
	if len(lines) == accounts.MaxStatementLimit {
		return false
	}
	for tid, b := range book {
		if (b.From == id || b.To == id) && !listed[tid] {
			t.Errorf("statement of %s lacks transfer %s", id, tid)
		}
	}
	if before != m.opening[id] {
		t.Errorf("statement of %s walks back to %d cents; opening was %d", id, before, m.opening[id])
	}
	return true
}

// moneyLineError compares one statement line with the 201 body of
// its transfer.
func moneyLineError(id string, l moneyStatementLine, book map[string]moneyTransfer) error {
	b, ok := book[l.TransferID]
	if !ok {
		return fmt.Errorf("statement of %s lists transfer %q, which no caller was told of", id, l.TransferID)
	}
	amount, _ := moneyMinor(b.Amount)
	signed, err := moneyMinor(l.Amount)
	wantDir, wantOther, wantSigned := "credit", b.From, amount
	if b.From == id {
		wantDir, wantOther, wantSigned = "debit", b.To, -amount
	}
	if err != nil || l.Direction != wantDir || l.Counterparty != wantOther || signed != wantSigned || l.Currency != "EUR" {
		return fmt.Errorf("statement of %s: line %+v does not match transfer %+v", id, l, b)
	}
	return nil
}

// moneyWaitFor (named for the money tests that came first; any test may use
// it) polls cond every few milliseconds until it holds or the deadline
// passes, and reports whether it held.
func moneyWaitFor(deadline time.Duration, cond func() bool) bool {
	end := time.Now().Add(deadline)
	for time.Now().Before(end) {
		if cond() {
			return true
		}
		time.Sleep(5 * time.Millisecond)
	}
	return cond()
}
