package accounts

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/metrics"
	"github.com/facade-dev/facade/redisdb"
)

// Store keeps accounts, transfers and statements in Redis. It is safe for
// concurrent use; several instances may share one Redis. Build it with
// NewStore; the zero value is not usable.
type Store struct {
	rdb     redis.UniversalClient
	log     *slog.Logger
	metrics *metrics.Metrics
	now     func() time.Time
	// batch pipelines concurrent account reads (redisdb.Batcher says why).
	batch *redisdb.Batcher
	// transfers applies concurrent transfers in batches, one script call
	// each (applyTransfers).
	transfers *redisdb.Combiner[*transferCall]
	cursors   cursorKeys // seals the account list's cursors (cursor.go)
}

// pipelines is how many read pipelines may be in flight at once: enough
// to keep Redis busy while a batch travels, few enough that concurrent
// reads gather into batches.
const pipelines = 4

// Config tunes a Store. The zero Config works: every field documents
// what its zero value means.
type Config struct {
	// Log receives the store's log lines; nil means slog.Default().
	Log *slog.Logger
	// Metrics counts transfers; nil means a private set.
	Metrics *metrics.Metrics
	// Now is the clock created accounts and the transfer audit records
	// are stamped with; nil means time.Now. Transfers themselves are
	// stamped by Redis's own clock, inside their script.
	Now func() time.Time
}

// NewStore returns a store on rdb, tuned by cfg. It does not contact
// Redis.
func NewStore(rdb redis.UniversalClient, cfg Config) *Store {
	s := &Store{rdb: rdb, log: cfg.Log, metrics: metrics.Or(cfg.Metrics), now: cfg.Now}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.now == nil {
		s.now = time.Now
	}
	s.batch = redisdb.NewBatcher(rdb, pipelines)
	s.transfers = redisdb.NewCombiner(transferBatches, maxTransferBatch, s.applyTransfers)
	return s
}

// Account is one account record. Balance is in minor units of Currency.
type Account struct {
	ID        facade.AccountID
	Owner     string
	Currency  Currency
	Balance   int64
	CreatedAt time.Time
}

// BalanceAmount returns the balance as an Amount, ready for JSON.
func (a Account) BalanceAmount() Amount { return Amount{Minor: a.Balance, Currency: a.Currency} }

// Get returns the account id, or ErrNotFound.
func (s *Store) Get(ctx context.Context, id facade.AccountID) (Account, error) {
	var cmd *redis.SliceCmd
	s.batch.Do(ctx, func(p redis.Pipeliner) {
		cmd = p.HMGet(ctx, accountKey(id.String()), "owner", "currency", "exponent", "balance", "created")
	})
	vals, err := cmd.Result()
	if err != nil {
		return Account{}, redisdb.Error(err)
	}
	if vals[1] == nil {
		return Account{}, facade.ErrNotFound
	}
	return decodeAccount(id, vals)
}

// decodeAccount builds an Account from HMGET owner currency exponent
// balance created. A record Facade did not write is an internal error.
func decodeAccount(id facade.AccountID, vals []any) (Account, error) {
	var f [5]string
	for i, v := range vals {
		s, ok := v.(string)
		if !ok {
			return Account{}, corrupt("account " + id.String() + " lacks a field")
		}
		f[i] = s
	}
	exp, err1 := strconv.Atoi(f[2])
	balance, err2 := strconv.ParseInt(f[3], 10, 64)
	created, err3 := strconv.ParseInt(f[4], 10, 64)
	if err := errors.Join(err1, err2, err3); err != nil {
		return Account{}, corrupt("account " + id.String() + ": " + err.Error())
	}
	return Account{
		ID: id, Owner: f[0], Currency: Currency{Code: f[1], Exponent: exp},
		Balance: balance, CreatedAt: time.UnixMicro(created).UTC(),
	}, nil
}

// createScript writes an account only when none exists under its id, so a
// seed run never resets a balance that transfers have since changed. The
// id joins the account index either way, so seeding again indexes
// accounts created before the index existed.
// KEYS[1] account, KEYS[2] index; ARGV owner, currency, exponent, balance,
// created µs, id.
var createScript = redis.NewScript(`
redis.call('ZADD', KEYS[2], 0, ARGV[6])
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'owner', ARGV[1], 'currency', ARGV[2], 'exponent', ARGV[3],
  'balance', ARGV[4], 'created', ARGV[5])
return 1
`)

// Create stores a new account and reports whether it did. An existing
// account under the same id is left exactly as it is (created=false).
// A zero CreatedAt means now. Invalid input is refused: a currency not in
// the table (ErrUnknownCurrency), a negative balance (ErrBadAmount).
func (s *Store) Create(ctx context.Context, a Account) (created bool, err error) {
	switch {
	case !a.Currency.known():
		return false, facade.ErrUnknownCurrency
	case a.Balance < 0:
		return false, badAmount("balance", facade.ReasonMalformed)
	}
	if a.CreatedAt.IsZero() {
		a.CreatedAt = s.now()
	}
	id := a.ID.String()
	n, err := createScript.Run(ctx, s.rdb, []string{accountKey(id), indexKey()},
		a.Owner, a.Currency.Code, a.Currency.Exponent,
		strconv.FormatInt(a.Balance, 10), a.CreatedAt.UnixMicro(), id).Int()
	if err != nil {
		return false, redisdb.Error(err)
	}
	return n == 1, nil
}

// SeedAccount is one entry of the seed file's "accounts" array (docs/contract.md
// §8): {"id": "1001", "owner": "alice", "currency": "EUR", "balance": "250.00"}.
type SeedAccount struct {
	ID       string `json:"id"`
	Owner    string `json:"owner"`
	Currency string `json:"currency"`
	Balance  string `json:"balance"`
}

// Account parses a seed entry into the account it describes: a
// well-formed id, an owner, a known currency, and a balance written in the
// currency's precision ("250.00"; "0" allowed; "250.001" in EUR refused).
func (sa SeedAccount) Account() (Account, error) {
	id, err := facade.ParseAccountID(sa.ID)
	cur, ok := LookupCurrency(sa.Currency)
	switch {
	case err != nil || sa.Owner == "":
		return Account{}, facade.ErrBadIdentifier
	case !ok:
		return Account{}, facade.ErrUnknownCurrency
	}
	balance, err := ParseBalance(sa.Balance, cur)
	if err != nil {
		return Account{}, err
	}
	return Account{ID: id, Owner: sa.Owner, Currency: cur, Balance: balance}, nil
}

// Seed creates the account described by a seed entry unless it exists.
func (s *Store) Seed(ctx context.Context, sa SeedAccount) (created bool, err error) {
	a, err := sa.Account()
	if err != nil {
		return false, err
	}
	return s.Create(ctx, a)
}

// corrupt reports stored data this package did not write.
func corrupt(what string) error {
	return facade.Wrap(facade.ErrInternal, errors.New("accounts: corrupt data: "+what))
}
