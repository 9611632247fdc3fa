// Package redisdb opens the one Redis connection the service uses, from the
// settings in docs/contract.md §1: a redis:// or rediss:// URL, a comma list of
// cluster addresses, or a Sentinel master name. Everything else takes a
// redis.UniversalClient, so the three deployments need no other code.
//
// Each domain package owns its own key names (see the keys.go in each); this
// package owns none.
package redisdb

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/facade-dev/facade"
)

// dialTimeout bounds one connection attempt; with a single dial retry a
// request learns within seconds that Redis is down.
const dialTimeout = 2 * time.Second

// Config says where Redis is. Exactly one of URL or Addrs must be set.
type Config struct {
	URL    string   // FACADE_REDIS_URL
	Addrs  []string // FACADE_REDIS_ADDRS: cluster nodes, or sentinels with Master
	Master string   // FACADE_REDIS_MASTER: sentinel master name
}

// ErrNotConfigured means neither a URL nor addresses were given.
var ErrNotConfigured = errors.New("FACADE_REDIS_URL (or FACADE_REDIS_ADDRS) is required")

// Open returns a client for cfg. It does not contact Redis.
func Open(cfg Config) (redis.UniversalClient, error) {
	switch {
	case cfg.URL != "":
		opts, err := redis.ParseURL(cfg.URL)
		if err != nil {
			return nil, fmt.Errorf("FACADE_REDIS_URL is not a valid redis:// or rediss:// URL")
		}
		// Fail fast when Redis is down: callers answer 503 with Retry-After
		// rather than hold a request for seconds of dial retries.
		opts.DialerRetries = 1
		opts.DialTimeout = dialTimeout
		return redis.NewClient(opts), nil
	case len(cfg.Addrs) > 0 && cfg.Master != "":
		return redis.NewFailoverClient(&redis.FailoverOptions{MasterName: cfg.Master, SentinelAddrs: cfg.Addrs,
			DialerRetries: 1, DialTimeout: dialTimeout}), nil
	case len(cfg.Addrs) > 0:
		return redis.NewClusterClient(&redis.ClusterOptions{Addrs: cfg.Addrs,
			DialerRetries: 1, DialTimeout: dialTimeout}), nil
	}
	return nil, ErrNotConfigured
}

// AppendOnly reports whether the server persists writes with AOF. Money must
// not live in a Redis that forgets (docs/contract.md §5); serve warns when it does.
func AppendOnly(ctx context.Context, c redis.UniversalClient) (bool, error) {
	v, err := c.ConfigGet(ctx, "appendonly").Result()
	if err != nil {
		return false, err
	}
	return v["appendonly"] == "yes", nil
}

// Error turns a Redis failure into the client-safe error every store
// returns: 503 with Retry-After when Redis cannot be reached, 500 otherwise.
// The cause is kept for the log only. nil stays nil.
func Error(err error) error {
	switch {
	case err == nil:
		return nil
	case IsUnavailable(err):
		return facade.Wrap(facade.ErrStoreUnavailable, err)
	}
	var classified *facade.Error
	if errors.As(err, &classified) {
		return err
	}
	return facade.Wrap(facade.ErrInternal, err)
}

// IsUnavailable reports whether err means Redis could not be reached (as
// opposed to a script or data error), so callers can answer 503.
func IsUnavailable(err error) bool {
	if err == nil || errors.Is(err, redis.Nil) {
		return false
	}
	// An error already classified (a reply a store found corrupt, say)
	// keeps its class: only an outage it wraps is one.
	var classified *facade.Error
	if errors.As(err, &classified) {
		return classified.Code == facade.ErrStoreUnavailable.Code
	}
	var re redis.Error
	if errors.As(err, &re) {
		// A reply from the server: it is up. LOADING and similar transient
		// states still mean "not available now".
		msg := re.Error()
		return strings.HasPrefix(msg, "LOADING") || strings.HasPrefix(msg, "MASTERDOWN") ||
			strings.HasPrefix(msg, "CLUSTERDOWN") || strings.HasPrefix(msg, "TRYAGAIN")
	}
	return !errors.Is(err, context.Canceled)
}
