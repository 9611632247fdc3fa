package accounts

import (
	"context"

	"github.com/facade-dev/facade/redisdb"
)

// ledgerPage bounds one XRANGE read, so walking a long ledger never holds a
// huge reply in memory at once.
const ledgerPage = 1000

// LedgerTransferIDs calls fn with the id of every transfer in the ledger,
// in the order the transfers were applied. It is the reconciliation view:
// each applied transfer appears exactly once, whatever callers were told.
func (s *Store) LedgerTransferIDs(ctx context.Context, fn func(transferID string)) error {
	start := "-"
	for {
		msgs, err := s.rdb.XRangeN(ctx, ledgerKey(), start, "+", ledgerPage).Result()
		if err != nil {
			return redisdb.Error(err)
		}
		for _, m := range msgs {
			tid, _ := m.Values["transfer"].(string)
			fn(tid)
		}
		if len(msgs) < ledgerPage {
			return nil
		}
		start = "(" + msgs[len(msgs)-1].ID
	}
}
