package accounts

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/redisdb"
)

// MaxIDsPage is the most ids one IDsAfter call returns.
const MaxIDsPage = 1000

// IDsAfter returns up to n account ids that sort after `after` (byte
// order; the zero AccountID means from the first), in that order, from the
// account index. It is how GET /rs/account walks the stored accounts: the
// caller decides which of them to show, so a wildcard grant lists only
// accounts that exist. The ids are parsed here, where they come out of
// Redis: one this package did not write is an internal error.
func (s *Store) IDsAfter(ctx context.Context, after facade.AccountID, n int) ([]facade.AccountID, error) {
	if n < 1 || n > MaxIDsPage {
		return nil, facade.ErrBadParameter
	}
	min := "-"
	if !after.IsZero() {
		min = "(" + after.String()
	}
	stored, err := s.rdb.ZRangeByLex(ctx, indexKey(), &redis.ZRangeBy{Min: min, Max: "+", Count: int64(n)}).Result()
	if err != nil {
		return nil, redisdb.Error(err)
	}
	ids := make([]facade.AccountID, len(stored))
	for i, v := range stored {
		if ids[i], err = facade.ParseAccountID(v); err != nil {
			return nil, corrupt("account index holds " + clip(v))
		}
	}
	return ids, nil
}

// GetMany returns the accounts of ids that exist, in the order of ids, in
// one round trip.
func (s *Store) GetMany(ctx context.Context, ids []facade.AccountID) ([]Account, error) {
	cmds := make([]*redis.SliceCmd, len(ids))
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			cmds[i] = p.HMGet(ctx, accountKey(id.String()), "owner", "currency", "exponent", "balance", "created")
		}
		return nil
	})
	if err != nil {
		return nil, redisdb.Error(err)
	}
	out := make([]Account, 0, len(ids))
	for i, cmd := range cmds {
		vals := cmd.Val()
		if vals[1] == nil {
			continue // indexed but gone: not listed
		}
		a, err := decodeAccount(ids[i], vals)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}
