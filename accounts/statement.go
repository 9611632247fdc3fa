package accounts

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/redisdb"
)

// MaxStatementLimit is the most entries one Statement call returns.
const MaxStatementLimit = 100

// Direction says which way money went for the account a statement is about.
type Direction string

// Directions of a statement entry.
const (
	Debit  Direction = "debit"  // money left the account
	Credit Direction = "credit" // money arrived in the account
)

// StatementEntry is one transfer as seen from one account. Amount is in
// minor units and always positive; Direction gives its sign.
type StatementEntry struct {
	TransferID   string
	Direction    Direction
	Counterparty string // the other account
	Amount       int64
	Currency     Currency
	CreatedAt    time.Time
	Reference    string // "" for none
	// BalanceAfter is the account's balance right after this transfer, in
	// minor units; nil for a transfer recorded before balances were kept.
	BalanceAfter *int64
}

// BalanceAfterAmount returns BalanceAfter as an Amount, nil when unknown.
func (e StatementEntry) BalanceAfterAmount() *Amount {
	if e.BalanceAfter == nil {
		return nil
	}
	return &Amount{Minor: *e.BalanceAfter, Currency: e.Currency}
}

// SignedAmount returns the amount with its sign for the account: negative
// for a debit, positive for a credit.
func (e StatementEntry) SignedAmount() Amount {
	if e.Direction == Debit {
		return Amount{Minor: -e.Amount, Currency: e.Currency}
	}
	return Amount{Minor: e.Amount, Currency: e.Currency}
}

// Lines are read by position (lines.go). A range's end reads scoreSlack
// µs further than its time and keeps only the transfers whose time is
// inside: a line of the sorted set scores up to a batch's size past its
// transfer's time (rollout.go).
const scoreSlack = 1000

// StatementQuery selects a page of a statement. The zero value of each
// field means no bound.
type StatementQuery struct {
	Limit  int       // 1 to MaxStatementLimit
	Before *Position // the page starts after this entry (a cursor's)
	From   time.Time // the earliest transfer time, inclusive
	To     time.Time // the latest transfer time, inclusive
}

// StatementPage is one page of a statement, newest first. Next is where
// the following page starts; nil when the range holds no more.
type StatementPage struct {
	Entries []StatementEntry
	Next    *Position
}

// Statement returns a page of account id's statement, newest first (an
// empty, non-nil Entries when there are none). q.Limit must be 1 to
// MaxStatementLimit (else ErrBadParameter); an unknown account is
// ErrNotFound.
func (s *Store) Statement(ctx context.Context, account facade.AccountID, q StatementQuery) (StatementPage, error) {
	id := account.String()
	if q.Limit < 1 || q.Limit > MaxStatementLimit {
		return StatementPage{}, facade.ErrBadParameter
	}
	lines, err := s.statementLines(ctx, id, q)
	if err != nil {
		return StatementPage{}, err
	}
	var page StatementPage
	if len(lines) > q.Limit { // one more than asked: the range goes on
		lines = lines[:q.Limit]
		page.Next = &lines[len(lines)-1].at
	}
	tids := make([]string, len(lines))
	for i, l := range lines {
		tids[i] = l.tid
	}
	entries, err := s.statementEntries(ctx, id, tids)
	if err != nil {
		return StatementPage{}, err
	}
	page.Entries = entries[:0]
	for _, e := range entries { // the slack read past the range's end
		if (q.From.IsZero() || !e.CreatedAt.Before(q.From)) && (q.To.IsZero() || !e.CreatedAt.After(q.To)) {
			page.Entries = append(page.Entries, e)
		}
	}
	return page, nil
}

// statementLines reads up to q.Limit+1 lines of id's history in q's
// range, newest first, in one round trip (two when the account's
// statement is still a list: rollout.go).
func (s *Store) statementLines(ctx context.Context, id string, q StatementQuery) ([]statementLine, error) {
	r := rangeOf(q)
	lines, listed, err := s.readLines(ctx, id, r)
	if err == nil && listed {
		if err = s.migrateStatement(ctx, id); err == nil {
			lines, _, err = s.readLines(ctx, id, r)
		}
	}
	return lines, err
}

// lineRange is what a page reads: up to n lines before end, from start
// (the stream's id) and low (the sorted set's score) on.
type lineRange struct {
	end        Position
	start, low string
	n          int64
}

// rangeOf is the lines q's page reads: before its cursor and not past its
// end (with the slack), from its start, one more than its limit.
func rangeOf(q StatementQuery) lineRange {
	r := lineRange{end: Position{at: 1<<63 - 1}, start: "-", low: "-inf", n: int64(q.Limit) + 1}
	if !q.To.IsZero() {
		r.end = Position{at: q.To.UnixMicro() + scoreSlack + 1}
	}
	if q.Before != nil && q.Before.before(r.end) {
		r.end = *q.Before
	}
	if !q.From.IsZero() {
		r.start = strconv.FormatInt(q.From.UnixMicro(), 10)
		r.low = r.start
	}
	return r
}

// readLines reads r's lines of id's stream and sorted set, newest first,
// whether the account exists and whether its statement is still a list,
// in one round trip.
func (s *Store) readLines(ctx context.Context, id string, r lineRange) (lines []statementLine, listed bool, err error) {
	var exists, list *redis.IntCmd
	var entries *redis.XMessageSliceCmd
	var scored *redis.ZSliceCmd
	_, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		exists = p.Exists(ctx, accountKey(id))
		list = p.Exists(ctx, statementKey(id))
		if end := streamEnd(r.end); end != "" {
			entries = p.XRevRangeN(ctx, linesKey(id), end, r.start, r.n)
		}
		scored = p.ZRevRangeByScoreWithScores(ctx, historyKey(id), &redis.ZRangeBy{Max: scoreMax(r.end), Min: r.low, Count: r.n})
		return nil
	})
	switch {
	case err != nil:
		return nil, false, redisdb.Error(err)
	case exists.Val() == 0:
		return nil, false, facade.ErrNotFound
	}
	var streamed []statementLine
	if entries != nil {
		if streamed, err = streamLines(entries.Val(), r.end); err != nil {
			return nil, false, err
		}
	}
	return newestLines(streamed, scoredLines(scored.Val()), int(r.n)), list.Val() != 0, nil
}

// SealStatementCursor seals where a statement page stopped, bound to the
// principal it is given to and the account: it opens for no one else and
// on no other account's statement (docs/contract.md §5). A position in the
// sorted set is sealed as the build before the streams sealed it, its
// score alone, so that during a rollout either build opens the other's
// cursors (rollout.go).
func (s *Store) SealStatementCursor(ctx context.Context, principal string, accountID facade.AccountID, at Position) (string, error) {
	payload := strconv.FormatInt(at.at, 10)
	if at.seq > 0 {
		payload += "-" + strconv.FormatInt(at.seq, 10) + "-" + strconv.Itoa(at.line)
	}
	return s.seal(ctx, statementBound(principal, accountID.String()), []byte(payload))
}

// OpenStatementCursor returns the position a cursor sealed by
// SealStatementCursor for this principal and account holds; any other
// cursor is a 400 naming the parameter.
func (s *Store) OpenStatementCursor(ctx context.Context, principal string, accountID facade.AccountID, cursor string) (Position, error) {
	raw, err := s.open(ctx, statementBound(principal, accountID.String()), cursor)
	if err != nil {
		return Position{}, errBadCursor
	}
	p, ok := parsePosition(string(raw))
	if !ok {
		return Position{}, errBadCursor
	}
	return p, nil
}

// parsePosition reads a sealed position: "<score>", or
// "<at>-<seq>-<line>" for a line of the stream.
func parsePosition(s string) (Position, bool) {
	parts := strings.Split(s, "-")
	var n [3]int64
	for i, part := range parts {
		v, err := strconv.ParseInt(part, 10, 64)
		if err != nil || v < 0 || i >= len(n) {
			return Position{}, false
		}
		n[i] = v
	}
	if len(parts) == 2 || len(parts) == 3 && n[1] == 0 {
		return Position{}, false
	}
	return Position{at: n[0], seq: n[1], line: int(n[2])}, true
}

// statementBound is what a statement cursor is sealed with: its kind, so
// an account list cursor never opens as one, then principal and account,
// each length-prefixed so no two pairs write the same bytes.
func statementBound(principal, accountID string) []byte {
	b := []byte("statement")
	for _, part := range []string{principal, accountID} {
		b = strconv.AppendInt(append(b, ':'), int64(len(part)), 10)
		b = append(append(b, ':'), part...)
	}
	return b
}

// statementEntries reads the transfer records in one round trip.
func (s *Store) statementEntries(ctx context.Context, id string, tids []string) ([]StatementEntry, error) {
	entries := make([]StatementEntry, 0, len(tids))
	if len(tids) == 0 {
		return entries, nil
	}
	cmds := make([]*redis.SliceCmd, len(tids))
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, tid := range tids {
			cmds[i] = p.HMGet(ctx, transferKey(tid), "from", "to", "amount", "currency", "exponent", "created",
				"ref", "from_after", "to_after")
		}
		return nil
	})
	if err != nil {
		return nil, redisdb.Error(err)
	}
	for i, cmd := range cmds {
		e, err := decodeEntry(id, tids[i], cmd.Val())
		if err != nil {
			return nil, err
		}
		entries = append(entries, e)
	}
	return entries, nil
}

// decodeEntry builds an entry from HMGET from to amount currency exponent
// created ref from_after to_after of one transfer record. The last three
// are absent from records written before references and balances were
// kept.
func decodeEntry(id, tid string, vals []any) (StatementEntry, error) {
	var f [9]string
	for i, v := range vals {
		s, ok := v.(string)
		if !ok && i < 6 {
			return StatementEntry{}, corrupt("transfer " + tid + " lacks a field")
		}
		f[i] = s
	}
	amount, err1 := strconv.ParseInt(f[2], 10, 64)
	exp, err2 := strconv.Atoi(f[4])
	created, err3 := strconv.ParseInt(f[5], 10, 64)
	if err := errors.Join(err1, err2, err3); err != nil {
		return StatementEntry{}, corrupt("transfer " + tid)
	}
	e := StatementEntry{
		TransferID: tid, Direction: Credit, Counterparty: f[0], Amount: amount,
		Currency: Currency{Code: f[3], Exponent: exp}, CreatedAt: time.UnixMicro(created).UTC(),
		Reference: f[6],
	}
	after := f[8]
	if f[0] == id {
		e.Direction, e.Counterparty, after = Debit, f[1], f[7]
	}
	if after != "" {
		b, err := strconv.ParseInt(after, 10, 64)
		if err != nil {
			return StatementEntry{}, corrupt("transfer " + tid + " balance after")
		}
		e.BalanceAfter = &b
	}
	return e, nil
}
