package accounts

import (
	"context"
	"errors"
	"strconv"
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

// An account's statement is its history: a sorted set of the transfer ids
// that touched it (historyKey), each scored by the transfer's creation
// time in µs, made strictly increasing per account by transfer.lua (a
// transfer of the same µs as the account's newest entry scores one more).
// So a score is both a place in the history, which a sealed cursor holds,
// and a time, which a date range selects; a page is one ZREVRANGEBYSCORE
// ... LIMIT from that place, O(log n + page) in Redis, as cheap at the
// account's first transfer as at its newest (BenchmarkStatementPage).
// The score of a transfer is at most scoreSlack µs past its time (a batch
// holds at most maxTransferBatch transfers); ranges read that much further
// and keep only the transfers whose time is inside.
const scoreSlack = 1000

// StatementQuery selects a page of a statement. The zero value of each
// field means no bound.
type StatementQuery struct {
	Limit  int       // 1 to MaxStatementLimit
	Before *Position // the page starts after this entry (a cursor's)
	From   time.Time // the earliest transfer time, inclusive
	To     time.Time // the latest transfer time, inclusive
}

// Position is where a statement page stopped: the score of its last
// entry. It is only ever handed out sealed (SealStatementCursor).
type Position struct{ score int64 }

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
	scored, err := s.statementIDs(ctx, id, q)
	if err != nil {
		return StatementPage{}, err
	}
	var page StatementPage
	if len(scored) > q.Limit { // one more than asked: the range goes on
		scored = scored[:q.Limit]
		page.Next = &Position{score: int64(scored[len(scored)-1].Score)}
	}
	tids := make([]string, len(scored))
	for i, z := range scored {
		tids[i], _ = z.Member.(string)
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

// statementIDs reads up to q.Limit+1 transfer ids of id's history in q's
// range, newest first with their scores, and whether the account exists,
// in one round trip (two when the account's statement is still a list:
// migrate.go).
func (s *Store) statementIDs(ctx context.Context, id string, q StatementQuery) ([]redis.Z, error) {
	max, min := "+inf", "-inf"
	if !q.To.IsZero() {
		max = strconv.FormatInt(q.To.UnixMicro()+scoreSlack, 10)
	}
	if q.Before != nil && (q.To.IsZero() || q.Before.score <= q.To.UnixMicro()+scoreSlack) {
		max = "(" + strconv.FormatInt(q.Before.score, 10)
	}
	if !q.From.IsZero() {
		min = strconv.FormatInt(q.From.UnixMicro(), 10)
	}
	for migrated := false; ; migrated = true {
		var exists, legacy *redis.IntCmd
		var ids *redis.ZSliceCmd
		_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			exists = p.Exists(ctx, accountKey(id))
			legacy = p.Exists(ctx, statementKey(id))
			ids = p.ZRevRangeByScoreWithScores(ctx, historyKey(id), &redis.ZRangeBy{Max: max, Min: min, Count: int64(q.Limit) + 1})
			return nil
		})
		switch {
		case err != nil:
			return nil, redisdb.Error(err)
		case exists.Val() == 0:
			return nil, facade.ErrNotFound
		case legacy.Val() == 0 || migrated:
			return ids.Val(), nil
		}
		if err := s.migrateStatement(ctx, id); err != nil { // a statement kept as a list (migrate.go)
			return nil, err
		}
	}
}

// SealStatementCursor seals where a statement page stopped, bound to the
// principal it is given to and the account: it opens for no one else and
// on no other account's statement (docs/contract.md §5).
func (s *Store) SealStatementCursor(ctx context.Context, principal string, accountID facade.AccountID, at Position) (string, error) {
	return s.seal(ctx, statementBound(principal, accountID.String()), []byte(strconv.FormatInt(at.score, 10)))
}

// OpenStatementCursor returns the position a cursor sealed by
// SealStatementCursor for this principal and account holds; any other
// cursor is a 400 naming the parameter.
func (s *Store) OpenStatementCursor(ctx context.Context, principal string, accountID facade.AccountID, cursor string) (Position, error) {
	raw, err := s.open(ctx, statementBound(principal, accountID.String()), cursor)
	if err != nil {
		return Position{}, errBadCursor
	}
	score, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil || score < 0 {
		return Position{}, errBadCursor
	}
	return Position{score: score}, nil
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
