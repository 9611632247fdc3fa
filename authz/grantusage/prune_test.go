package grantusage

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/facade-dev/facade/internal/testkit/testredis"
)

// TestPruningSparesALineUsedSinceTheScan: the removal re-reads each last
// use in Redis, so an instance that credited the line between the scan
// and the removal keeps it.
func TestPruningSparesALineUsedSinceTheScan(t *testing.T) {
	rdb := testredis.Client(t)
	ctx := context.Background()
	now := time.Now().Unix()
	rdb.HSet(ctx, lastKey, "p, alice, account:1, view_account", now, "p, bob, account:2, view_account", now-10)
	// Both were seen as old by a scan with cutoff now-5; alice's line was used since.
	if err := pruneScript.Run(ctx, rdb, []string{lastKey}, now-5, "p, alice, account:1, view_account", "p, bob, account:2, view_account").Err(); err != nil {
		t.Fatal(err)
	}
	left, err := rdb.HKeys(ctx, lastKey).Result()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(left, []string{"p, alice, account:1, view_account"}) {
		t.Fatalf("after pruning the last uses are %q, want alice's line alone", left)
	}
}
