package auth

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Bearer tokens of a revoked principal (`facade sessions revoke`,
// docs/operations.md "Revoking a principal"): Redis holds, per principal,
// when it was revoked, shared by every instance. A token issued before
// then (its iat, within the clock leeway; a token without iat cannot show
// it was not) is refused as expired, until every such token would have
// expired anyway: the record lives FACADE_JWT_MAX_LIFETIME plus the leeway.
//
// The record is read when a token is verified, not on every request: a
// verified token is cached for at most tokenCacheTTL, so an instance that
// verified one in the last minute accepts it until its entry ends (one
// Redis read per token and minute, whatever the traffic). With Redis
// unreachable the token is accepted, as before revocation existed, and the
// outage is logged once (package internal/outage): the data behind the
// routes answers 503 by itself, the builds do not need Redis.

// revokedKeyPrefix + principal id: the revocation time, Unix seconds.
const revokedKeyPrefix = "facade:token:revoked:"

func revokedKey(sub string) string { return revokedKeyPrefix + sub }

// errRevoked is a token issued before its principal was revoked.
var errRevoked = errors.New("token issued before its principal was revoked (facade sessions revoke)")

// RevokeTokens refuses, on every instance, sub's bearer tokens issued up
// to at. maxLifetime is FACADE_JWT_MAX_LIFETIME (zero: the default): after
// it, plus the leeway, every such token has expired and the record goes.
func RevokeTokens(ctx context.Context, rdb redis.UniversalClient, sub string, at time.Time, maxLifetime time.Duration) error {
	if maxLifetime <= 0 {
		maxLifetime = DefaultMaxLifetime
	}
	return storeError(rdb.Set(ctx, revokedKey(sub), at.Unix(), maxLifetime+tokenLeeway).Err())
}

// checkRevoked refuses a token of a revoked principal issued before the
// revocation (the leeway absorbs the issuer's clock running ahead).
func (a *Tokens) checkRevoked(ctx context.Context, sub string, iat *time.Time) error {
	if a.rdb == nil {
		return nil
	}
	v, err := a.rdb.Get(ctx, revokedKey(sub)).Result()
	switch {
	case errors.Is(err, redis.Nil):
		a.outage.OK(ctx)
		return nil
	case err != nil && ctx.Err() == nil:
		a.outage.Allowed(ctx, err)
		return nil
	case err != nil:
		return ctx.Err() // the caller went away: no news about Redis
	}
	a.outage.OK(ctx)
	at, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return nil // not a record this package wrote
	}
	if iat == nil || !iat.After(time.Unix(at, 0).Add(tokenLeeway)) {
		return errRevoked
	}
	return nil
}
