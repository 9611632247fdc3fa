package accounts

import (
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// An account's statement is kept as its lines: a Redis stream (linesKey)
// the transfer script appends to, one entry per transfer batch that
// touched the account. The entry's id is the batch's time in µs, as Redis
// writes stream ids ("<µs>-<n>", n counting the entries of one µs), and
// its one field, t, holds the batch's transfer ids of the account, oldest
// first, separated by spaces. Appending is one XADD an account a batch,
// however long the history: nothing is read first and nothing is
// re-sorted (docs/performance.md has what it costs next to the sorted set
// it replaced). Reading a page is one XREVRANGE from the cursor's place,
// O(log n + page) in Redis, as cheap at the account's first transfer as
// at its newest (BenchmarkStatementPage), and a date range is an id range,
// since ids are times.
//
// Histories written before the stream stay in the sorted set they were
// kept in (historyKey), read-only once the rollout is done (rollout.go):
// a page reads both in the same round trip and merges them by position.

// Position is where a statement line sits in its account's history, the
// newest last: ordered by at, then seq, then line. A line of the stream
// has its entry's time as at, the entry's sequence number plus one as seq
// and its place in the entry (the oldest 0) as line; a line of the sorted
// set has its score as at and seq and line 0, so no two lines of an
// account share a position. It is only ever handed out sealed
// (SealStatementCursor).
type Position struct {
	at, seq int64
	line    int
}

// before reports whether p comes before (is older than) q.
func (p Position) before(q Position) bool {
	switch {
	case p.at != q.at:
		return p.at < q.at
	case p.seq != q.seq:
		return p.seq < q.seq
	}
	return p.line < q.line
}

// statementLine is a transfer of an account's history at its position.
type statementLine struct {
	tid string
	at  Position
}

// streamEnd is XREVRANGE's end for the stream's lines before b: the entry
// b is in (whose older lines count) or the entries before it. "" when
// there can be none.
func streamEnd(b Position) string {
	switch {
	case b.seq > 0 && b.line > 0:
		return strconv.FormatInt(b.at, 10) + "-" + strconv.FormatInt(b.seq-1, 10)
	case b.seq > 0:
		return "(" + strconv.FormatInt(b.at, 10) + "-" + strconv.FormatInt(b.seq-1, 10)
	case b.at > 0:
		return "(" + strconv.FormatInt(b.at, 10) + "-0"
	}
	return ""
}

// scoreMax is ZREVRANGEBYSCORE's max for the sorted set's lines before b.
func scoreMax(b Position) string {
	if b.seq == 0 && b.line == 0 {
		return "(" + strconv.FormatInt(b.at, 10)
	}
	return strconv.FormatInt(b.at, 10)
}

// streamLines are the lines of stream entries (newest first) before b,
// newest first.
func streamLines(entries []redis.XMessage, b Position) ([]statementLine, error) {
	var out []statementLine
	for _, e := range entries {
		ms, seq, ok := strings.Cut(e.ID, "-")
		at, err1 := strconv.ParseInt(ms, 10, 64)
		n, err2 := strconv.ParseInt(seq, 10, 64)
		tids, _ := e.Values["t"].(string)
		if !ok || err1 != nil || err2 != nil || tids == "" {
			return nil, corrupt("statement line " + clip(e.ID))
		}
		ids := strings.Fields(tids)
		for i := len(ids) - 1; i >= 0; i-- {
			p := Position{at: at, seq: n + 1, line: i}
			if p.before(b) {
				out = append(out, statementLine{tid: ids[i], at: p})
			}
		}
	}
	return out, nil
}

// scoredLines are the sorted set's lines (newest first), newest first.
func scoredLines(scored []redis.Z) []statementLine {
	out := make([]statementLine, len(scored))
	for i, z := range scored {
		out[i].tid, _ = z.Member.(string)
		out[i].at = Position{at: int64(z.Score)} // µs: exact in a double until the year 2255
	}
	return out
}

// newestLines merges two histories' lines, each newest first, into the
// newest n of both, newest first.
func newestLines(a, b []statementLine, n int) []statementLine {
	out := make([]statementLine, 0, min(n, len(a)+len(b)))
	for len(out) < n && (len(a) > 0 || len(b) > 0) {
		if len(b) == 0 || len(a) > 0 && b[0].at.before(a[0].at) {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	return out
}
