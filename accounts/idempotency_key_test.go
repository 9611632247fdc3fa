package accounts

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/facade-dev/facade"
)

// TestIdempotencyKeyAlphabetEdges: an Idempotency-Key is 1 to 255 visible
// ASCII characters, "!" (0x21) to "~" (0x7e) (docs/contract.md): a key on
// an edge moves the money and, sent again, replays; one just past an edge
// is refused and moves nothing.
func TestIdempotencyKeyAlphabetEdges(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	open(t, s, "A", "EUR", "10.00")
	open(t, s, "B", "EUR", "0")
	for _, key := range []string{"!", "~", strings.Repeat("k", 255)} {
		req := textRequest{From: "A", To: "B", Amount: "1", IdempotencyKey: key, Principal: "alice"}
		if _, replayed, err := s.transferText(ctx, req, testMax); err != nil || replayed {
			t.Fatalf("key %.8q (%d characters): replayed %v, %v", key, len(key), replayed, err)
		}
		if _, replayed, err := s.transferText(ctx, req, testMax); err != nil || !replayed {
			t.Fatalf("key %.8q sent again: replayed %v, %v; want a replay", key, replayed, err)
		}
	}
	for _, key := range []string{"k\x7f", "k\x20", "k\x00"} {
		_, _, err := s.transferText(ctx, textRequest{From: "A", To: "B", Amount: "1", IdempotencyKey: key, Principal: "alice"}, testMax)
		wantError(t, err, facade.ErrBadIdempotencyKey)
	}
	if got := balances(t, s, "A", "B"); !slices.Equal(got, []int64{700, 300}) {
		t.Fatalf("balances = %v; want [700 300] (three transfers of 1.00, each once)", got)
	}
}
