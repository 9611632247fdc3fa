package authz

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// What the instances sharing one Redis know of each other's policy, in the
// keys this package owns (docs/operations.md, "The policy in Kubernetes"):
//
//   - sharedKey, the last policy this Redis saw (its hash and number of
//     lines), written by every instance that loads one: a new instance's
//     start-up shrink guard compares its files with it (GuardShared), as a
//     reload compares with the policy in force;
//   - instancesKey, each running instance's policy hash and when it said
//     so (beat): instances running different policies outside a rollout
//     are a warning and facade_policy_hashes above 1.
const (
	sharedKey    = "facade:authz:policy"
	instancesKey = "facade:authz:instances"
)

// beatEvery is how often an instance says which policy it runs; an
// instance silent for staleAfter is gone.
const (
	beatEvery  = 15 * time.Second
	staleAfter = 3 * beatEvery
)

// GuardShared is the shrink guard at start-up: refused, unless
// AllowShrink, when the policy just loaded is empty or has fewer than
// half of the lines of the last policy this Redis saw (another instance's,
// or this one's before a restart), as a reload would be refused against
// the policy in force. On success the policy is recorded as the last one
// seen. A Redis that cannot be read skips the guard, logged: it must not
// keep the service from starting.
func (a *Authorizer) GuardShared(ctx context.Context, rdb redis.UniversalClient) error {
	f := &a.force
	st := f.state()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	last, err := rdb.HGetAll(ctx, sharedKey).Result()
	if err != nil {
		f.log.Warn("could not read the last policy this Redis saw; the start-up shrink guard is skipped", "err", err)
		return nil
	}
	if before, err := strconv.Atoi(last["rules"]); err == nil && last["hash"] != st.hash && !f.allowShrink.Load() {
		if msg := shrinkage(before, len(st.pol.Rules)); msg != "" {
			return fmt.Errorf("authz: %s: %s of the last policy this Redis saw (hash %s); set FACADE_POLICY_ALLOW_SHRINK=1 to accept it",
				f.policyPath, msg, last["hash"])
		}
	}
	f.recordShared(ctx, rdb, st)
	return nil
}

// recordShared writes st as the last policy this Redis saw.
func (f *inForce) recordShared(ctx context.Context, rdb redis.UniversalClient, st *Loaded) {
	err := rdb.HSet(ctx, sharedKey, "hash", st.hash, "rules", len(st.pol.Rules), "at", f.now().Unix()).Err()
	if err != nil && ctx.Err() == nil {
		f.log.Warn("could not record the policy in Redis for the start-up shrink guard", "err", err)
	}
}

// newInstanceID names this instance in instancesKey.
func newInstanceID() string {
	b := make([]byte, 8)
	rand.Read(b) //nolint:errcheck // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b)
}

// beat says which policy this instance runs and counts the different ones
// the live instances run (facade_policy_hashes), warning once when they
// start to differ and saying once when they agree again. Stale entries
// (instances gone) are removed.
func (f *inForce) beat(ctx context.Context, rdb redis.UniversalClient) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	now := f.now()
	if err := rdb.HSet(ctx, instancesKey, f.instance, f.state().hash+" "+strconv.FormatInt(now.Unix(), 10)).Err(); err != nil {
		return // Redis down: the outage is reported elsewhere (facade_redis_up)
	}
	all, err := rdb.HGetAll(ctx, instancesKey).Result()
	if err != nil {
		return
	}
	seen := map[string]int{}
	for id, v := range all {
		hash, at, _ := strings.Cut(v, " ")
		sec, err := strconv.ParseInt(at, 10, 64)
		if err != nil || now.Sub(time.Unix(sec, 0)) > staleAfter {
			rdb.HDel(ctx, instancesKey, id) //nolint:errcheck // the next beat tries again
			continue
		}
		seen[hash]++
	}
	f.metrics.PolicyHashes.Set(float64(len(seen)))
	var hashes []string
	for h, n := range seen {
		hashes = append(hashes, fmt.Sprintf("%s (%d)", h, n))
	}
	slices.Sort(hashes)
	switch {
	case len(seen) > 1 && !f.differ:
		f.differ = true
		f.log.Warn("instances sharing this Redis run different policies; check that every instance has the same files",
			"hashes", strings.Join(hashes, ", "), "this", f.state().hash)
	case len(seen) <= 1 && f.differ:
		f.differ = false
		f.log.Info("instances sharing this Redis run the same policy again", "hash", f.state().hash)
	}
}
