package accounts

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/internal/testkit/testredis"
)

// TestTransferAuditIsStampedByTheStoresClock: the audit line of every
// attempt, applied or refused, carries the store's clock's time, as the
// rest of the service's parts do ("No globals", docs/contract.md), not the
// machine's.
func TestTransferAuditIsStampedByTheStoresClock(t *testing.T) {
	when := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	var out bytes.Buffer
	s := NewStore(testredis.Client(t), Config{Now: func() time.Time { return when }, Log: slog.New(slog.NewJSONHandler(&out, nil))})
	ctx := context.Background()
	open(t, s, "A", "EUR", "1.00")
	open(t, s, "B", "EUR", "0")
	if _, _, err := s.transferText(ctx, textRequest{From: "A", To: "B", Amount: "0.50"}, testMax); err != nil {
		t.Fatal(err)
	}
	_, _, err := s.transferText(ctx, textRequest{From: "A", To: "B", Amount: "5"}, testMax)
	wantError(t, err, facade.ErrInsufficientFunds)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d log lines, want 2 audit lines:\n%s", len(lines), out.String())
	}
	for _, l := range lines {
		var rec struct {
			Time  time.Time `json:"time"`
			Audit bool      `json:"audit"`
		}
		if err := json.Unmarshal([]byte(l), &rec); err != nil || !rec.Audit || !rec.Time.Equal(when) {
			t.Errorf("audit line stamped %v (audit %v, %v), want %v: %s", rec.Time, rec.Audit, err, when, l)
		}
	}
}
