package accounts

import (
	"context"
	"strconv"
	"testing"
)

// TestStatementBalanceAfterOnBothPaths: each line's balance_after is the
// account's balance right after it, on the in-memory path and on the
// string path that balances beyond 15 digits take (exact, not through a
// double), with the reference on both sides.
func TestStatementBalanceAfterOnBothPaths(t *testing.T) {
	ctx := context.Background()
	s, _ := newTestStore(t)
	open(t, s, "A", "EUR", "100.00")
	open(t, s, "B", "EUR", "0.00")
	open(t, s, "rich", "EUR", "90071992547409.93") // 9007199254740993 cents: 2^53+1, no double holds it
	open(t, s, "C", "EUR", "0.00")
	for _, r := range []textRequest{
		{From: "A", To: "B", Amount: "10.25", Reference: "one"},
		{From: "A", To: "B", Amount: "0.75"},
		{From: "rich", To: "C", Amount: "0.01", Reference: "big"},
	} {
		if _, _, err := s.transferText(ctx, r, testMax); err != nil {
			t.Fatal(err)
		}
	}
	for id, want := range map[string][]string{
		"A":    {"8900 ", "8975 one"},
		"B":    {"1100 ", "1025 one"},
		"rich": {"9007199254740992 big"},
		"C":    {"1 big"},
	} {
		page, err := s.Statement(ctx, mustAccount(id), StatementQuery{Limit: 10})
		lines := page.Entries
		if err != nil || len(lines) != len(want) {
			t.Fatalf("statement of %s: %v %v", id, lines, err)
		}
		for i, l := range lines {
			got := "none"
			if l.BalanceAfter != nil {
				got = itoa64(*l.BalanceAfter)
			}
			if got += " " + l.Reference; got != want[i] {
				t.Errorf("%s line %d: %q, want %q", id, i, got, want[i])
			}
		}
	}
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }
