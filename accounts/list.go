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
// order; "" means from the first), in that order, from the account index.
// It is how GET /rs/account walks the stored accounts: the caller decides
// which of them to show, so a wildcard grant lists only accounts that
// exist.
func (s *Store) IDsAfter(ctx context.Context, after string, n int) ([]string, error) {
	if after != "" && !facade.ValidID(after) {
		return nil, badIdentifier()
	}
	if n < 1 || n > MaxIDsPage {
		return nil, facade.ErrBadParameter
	}
	min := "-"
	if after != "" {
		min = "(" + after
	}
	ids, err := s.rdb.ZRangeByLex(ctx, indexKey(), &redis.ZRangeBy{Min: min, Max: "+", Count: int64(n)}).Result()
	if err != nil {
		return nil, redisdb.Error(err)
	}
	return ids, nil
}

// GetMany returns the accounts of ids that exist, in the order of ids, in
// one round trip.
func (s *Store) GetMany(ctx context.Context, ids []string) ([]Account, error) {
	for _, id := range ids {
		if !facade.ValidID(id) {
			return nil, badIdentifier()
		}
	}
	cmds := make([]*redis.SliceCmd, len(ids))
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			cmds[i] = p.HMGet(ctx, accountKey(id), "owner", "currency", "exponent", "balance", "created")
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
