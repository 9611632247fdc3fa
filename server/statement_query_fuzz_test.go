package server_test

import (
	"errors"
	"net/url"
	"testing"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/accounts"
	"github.com/facade-dev/facade/server"
)

// FuzzStatementQuery: whatever query a caller writes, a statement's query
// is either refused naming a parameter the query holds (and a rule), or a
// limit of 1 to 100 with from not after to; a date reads as its whole day.
func FuzzStatementQuery(f *testing.F) {
	for _, s := range []string{"", "limit=5", "from=2026-03-01&to=2026-03-31", "from=2026-03-02&to=2026-03-01",
		"to=2026-02-30", "from=2026-03-01T10:00:00%2B02:00", "cursor=abc&limit=100", "form=1", "limit=1&limit=2",
		"from=0000-01-01", "to=9999-12-31T23:59:59.999999999Z", "limit=007", "from=2026-03-01T10:00:00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		query, err := url.ParseQuery(raw)
		if err != nil {
			return // the router refuses what Go cannot split
		}
		q, cursor, err := server.StatementQuery(query)
		var fe *facade.Error
		if err != nil {
			if !errors.As(err, &fe) || fe.Code != facade.ErrBadParameter.Code || len(fe.Invalid) == 0 {
				t.Fatalf("%q: refused with %v", raw, err)
			}
			for _, in := range fe.Invalid {
				if _, ok := query[in.Parameter]; !ok || in.Reason == "" {
					t.Fatalf("%q: refusal names %q (%q), not a parameter of the query", raw, in.Parameter, in.Reason)
				}
			}
			return
		}
		if q.Limit < 1 || q.Limit > accounts.MaxStatementLimit || cursor != query.Get("cursor") || q.Before != nil {
			t.Fatalf("%q: accepted as %+v, cursor %q", raw, q, cursor)
		}
		if !q.From.IsZero() && !q.To.IsZero() && q.From.After(q.To) {
			t.Fatalf("%q: from %v after to %v", raw, q.From, q.To)
		}
		if d := query.Get("to"); len(d) == 10 && (q.To.Hour() != 23 || q.To.Minute() != 59 || q.To.Format("2006-01-02") != d) {
			t.Fatalf("%q: the date to=%s reads as %v, not its whole day", raw, d, q.To)
		}
		if d := query.Get("from"); len(d) == 10 && (q.From.Hour() != 0 || q.From.Format("2006-01-02") != d) {
			t.Fatalf("%q: the date from=%s reads as %v", raw, d, q.From)
		}
	})
}
