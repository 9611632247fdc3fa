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
//
// Every plan list answers its caller's isFavourite, so reading them is on
// the hottest path (a warm project list is a microsecond without Redis):
// a person's set read from Redis is kept in process for Fresh, and this
// instance's own Mark and Unmark replace it at once. A change made through
// another instance is seen within Fresh.
package favourites

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/facade-dev/facade"
)

// DefaultFresh is how long a person's favourites read from Redis are
// reused in process when Config.Fresh is zero.
const DefaultFresh = time.Second

// maxKept bounds the in-process copies (one small set per person): past
// it they are all dropped and read again.
const maxKept = 10000

// MaxPerPerson bounds one person's favourites: far more plans than anyone
// stars, few enough that reading them costs one small reply.
const MaxPerPerson = 500

// Store keeps favourites in Redis. Create it with New; it is safe for
// concurrent use.
type Store struct {
	rdb   redis.UniversalClient
	fresh time.Duration
	now   func() time.Time

	mu   sync.Mutex
	kept map[string]keptSet // by Redis key
	// changes counts this instance's Marks and Unmarks: a set read while
	// one happened is answered but not kept, since it may predate it.
	changes uint64
}

type keptSet struct {
	plans map[string]bool // never modified once kept
	until time.Time
}

// Config tunes a Store. The zero Config works: every field documents
// what its zero value means.
type Config struct {
	// Fresh is how long a set read from Redis is reused in process. Zero
	// means DefaultFresh; negative means not at all (every read goes to
	// Redis).
	Fresh time.Duration
	// Now is the clock the in-process copies expire by; nil means
	// time.Now.
	Now func() time.Time
}

// New returns a store on rdb, tuned by cfg. It does not contact Redis.
func New(rdb redis.UniversalClient, cfg Config) *Store {
	s := &Store{rdb: rdb, fresh: cfg.Fresh, now: cfg.Now, kept: map[string]keptSet{}}
	if s.fresh == 0 {
		s.fresh = DefaultFresh
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s
}

var escapeBraces = strings.NewReplacer("%", "%25", "{", "%7B", "}", "%7D")

func key(p facade.Principal) string {
	// Braces inside the ID would move the hash tag: they are escaped.
	return "facade:favourites:{" + escapeBraces.Replace(p.ID) + "}"
}

// Plans are the plan keys p marked. The set is shared: callers must not
// modify it.
func (s *Store) Plans(ctx context.Context, p facade.Principal) (map[string]bool, error) {
	k := key(p)
	now := s.now()
	s.mu.Lock()
	c, ok := s.kept[k]
	changes := s.changes
	s.mu.Unlock()
	if ok && now.Before(c.until) {
		return c.plans, nil
	}
	keys, err := s.rdb.SMembers(ctx, k).Result()
	if err != nil {
		return nil, facade.Wrap(facade.ErrStoreUnavailable, err)
	}
	out := make(map[string]bool, len(keys))
	for _, pk := range keys {
		out[pk] = true
	}
	s.keep(k, out, now, changes)
	return out, nil
}

// keep remembers a person's set until now+fresh, unless this instance
// changed a set since the read began (changes was s.changes then).
func (s *Store) keep(k string, plans map[string]bool, now time.Time, changes uint64) {
	if s.fresh <= 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.changes != changes {
		return
	}
	if len(s.kept) >= maxKept {
		clear(s.kept)
	}
	s.kept[k] = keptSet{plans: plans, until: now.Add(s.fresh)}
}

// changed drops this instance's copy of a person's set after a change,
// so the next read goes to Redis, and stops a read already under way from
// keeping what it read.
func (s *Store) changed(k string) {
	s.mu.Lock()
	delete(s.kept, k)
	s.changes++
	s.mu.Unlock()
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
	k := key(p)
	defer s.changed(k)
	ok, err := mark.Run(ctx, s.rdb, []string{k}, planKey, MaxPerPerson).Int()
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
	k := key(p)
	defer s.changed(k)
	if err := s.rdb.SRem(ctx, k, planKey).Err(); err != nil {
		return facade.Wrap(facade.ErrStoreUnavailable, err)
	}
	return nil
}
