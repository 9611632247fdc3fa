// Package favourites keeps each person's favourite build plans in Redis.
// Bamboo keeps favourites per Bamboo user, and the facade reaches Bamboo
// as one service account, so Bamboo's favourites would be that account's:
// the facade keeps them itself, per principal, and never sends them
// upstream (the build routes apply them, package proxy).
//
// Keys (this package's alone):
//
//	facade:favourites:{<id>}   set  the plan keys ("K-P") the person marked
//
// <id> is the principal's ID (the token's sub) as written, inside braces
// so that a person's key hashes to one cluster slot. A person keeps at
// most MaxPerPerson favourites.
package favourites

import (
	"context"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/facade-dev/facade"
)

// MaxPerPerson bounds one person's favourites: far more plans than anyone
// stars, few enough that reading them costs one small reply.
const MaxPerPerson = 500

// Store keeps favourites in Redis. Create it with New.
type Store struct {
	rdb redis.UniversalClient
}

// New returns a store on rdb.
func New(rdb redis.UniversalClient) *Store { return &Store{rdb: rdb} }

func key(p facade.Principal) string {
	// Braces inside the ID would move the hash tag: they are escaped.
	id := strings.NewReplacer("%", "%25", "{", "%7B", "}", "%7D").Replace(p.ID)
	return "facade:favourites:{" + id + "}"
}

// Plans are the plan keys p marked.
func (s *Store) Plans(ctx context.Context, p facade.Principal) (map[string]bool, error) {
	keys, err := s.rdb.SMembers(ctx, key(p)).Result()
	if err != nil {
		return nil, facade.Wrap(facade.ErrStoreUnavailable, err)
	}
	out := make(map[string]bool, len(keys))
	for _, k := range keys {
		out[k] = true
	}
	return out, nil
}

// mark adds a plan unless the set is full; marking one already marked is
// a success, full or not.
var mark = redis.NewScript(`
if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 1 then return 1 end
if redis.call('SCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('SADD', KEYS[1], ARGV[1])
return 1`)

// Mark adds planKey to p's favourites (idempotent). A person who keeps
// MaxPerPerson already is refused with ErrFavouritesFull.
func (s *Store) Mark(ctx context.Context, p facade.Principal, planKey string) error {
	ok, err := mark.Run(ctx, s.rdb, []string{key(p)}, planKey, MaxPerPerson).Int()
	if err != nil {
		return facade.Wrap(facade.ErrStoreUnavailable, err)
	}
	if ok == 0 {
		return facade.ErrFavouritesFull
	}
	return nil
}

// Unmark removes planKey from p's favourites (idempotent).
func (s *Store) Unmark(ctx context.Context, p facade.Principal, planKey string) error {
	if err := s.rdb.SRem(ctx, key(p), planKey).Err(); err != nil {
		return facade.Wrap(facade.ErrStoreUnavailable, err)
	}
	return nil
}
