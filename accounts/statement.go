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

// Statement returns the newest limit transfers of account id, newest first
// (an empty, non-nil slice when there are none). limit must be 1 to
// MaxStatementLimit (else ErrBadParameter); an unknown account
// is ErrNotFound.
func (s *Store) Statement(ctx context.Context, id string, limit int) ([]StatementEntry, error) {
	if !facade.ValidID(id) {
		return nil, badIdentifier()
	}
	if limit < 1 || limit > MaxStatementLimit {
		return nil, facade.ErrBadParameter
	}
	tids, err := s.statementIDs(ctx, id, limit)
	if err != nil {
		return nil, err
	}
	return s.statementEntries(ctx, id, tids)
}

// statementIDs reads the newest transfer ids of id, and whether it exists,
// in one round trip.
func (s *Store) statementIDs(ctx context.Context, id string, limit int) ([]string, error) {
	var exists *redis.IntCmd
	var ids *redis.StringSliceCmd
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		exists = p.Exists(ctx, accountKey(id))
		ids = p.LRange(ctx, statementKey(id), 0, int64(limit-1))
		return nil
	})
	if err != nil {
		return nil, redisdb.Error(err)
	}
	if exists.Val() == 0 {
		return nil, facade.ErrNotFound
	}
	return ids.Val(), nil
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
