package outage

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/facade-dev/facade/internal/testkit/testclock"
	"github.com/facade-dev/facade/internal/testkit/testlog"
)

// TestEachOutageIsTwoLines: many requests failing at once make one line
// when the outage starts; the first success makes one line with their
// count and the outage's duration; the next outage counts from zero.
func TestEachOutageIsTwoLines(t *testing.T) {
	var logs testlog.Buffer
	clock := testclock.New()
	o := New(slog.New(slog.NewJSONHandler(&logs, nil)), "rate limiter", clock.Now)
	ctx := context.Background()
	o.OK(ctx) // nothing was down: no line
	for round, want := range []int{50, 3} {
		var wg sync.WaitGroup
		for range want {
			wg.Go(func() { o.Allowed(ctx, errors.New("dial tcp: connection refused")) })
		}
		wg.Wait()
		o.Failed(ctx, errors.New("settlement failed")) // a background failure counts nothing
		clock.Advance(1500 * time.Millisecond)
		o.OK(ctx)
		o.OK(ctx)
		lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
		if len(lines) != 2*(round+1) {
			t.Fatalf("round %d: %d lines, want 2 per outage:\n%s", round, len(lines), logs.String())
		}
		var start, end map[string]any
		if json.Unmarshal([]byte(lines[2*round]), &start) != nil || json.Unmarshal([]byte(lines[2*round+1]), &end) != nil {
			t.Fatalf("not JSON:\n%s", logs.String())
		}
		if start["msg"] != "rate limiter unavailable; requests allowed until it is back" || start["err"] != "dial tcp: connection refused" {
			t.Errorf("round %d: start %v", round, start)
		}
		if end["msg"] != "rate limiter available again" || end["allowed"] != float64(want) || end["down_ms"] != float64(1500) {
			t.Errorf("round %d: end %v, want allowed %d after 1500 ms", round, end, want)
		}
	}
}
