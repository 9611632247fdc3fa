package accounts

import (
	"context"
	"errors"
	"log/slog"
	"syscall"
	"testing"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/internal/testkit/testredis"
)

// TestTransferWhileRedisIsDownKeepsTheCause: a transfer while Redis cannot
// be reached is a 503 (store unavailable; the client retries with its
// Idempotency-Key), and the error keeps the network cause, so the audit
// and error log lines say why (here: connection refused) rather than
// reporting corrupt data.
func TestTransferWhileRedisIsDownKeepsTheCause(t *testing.T) {
	srv := testredis.Start(t, testredis.Options{})
	s := NewStore(srv.Client(t), Config{Log: slog.New(slog.DiscardHandler)})
	open(t, s, "A", "EUR", "10.00")
	open(t, s, "B", "EUR", "0")
	srv.Stop()
	_, _, err := s.transferText(context.Background(), textRequest{From: "A", To: "B", Amount: "1", IdempotencyKey: "k", Principal: "alice"}, testMax)
	if !errors.Is(err, facade.ErrStoreUnavailable) || !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("transfer with Redis down: %v; want store unavailable, caused by connection refused", err)
	}
}
