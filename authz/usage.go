package authz

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Which grants are used (docs/policy.md, "Which lines are used"): every
// decision a line took part in is counted, in memory, per loaded policy:
//
//   - an allow credits its p line and every g line on the way from the
//     request's sub and obj to that line's (memberships, nested teams,
//     enrollments, a token group's lines), and, for a grade, the g lines
//     that gave the role (g, X, role:R) when the token did not;
//   - a deny decided by a deny line credits that line alone; a denial
//     because nothing matched credits nothing;
//   - the index decider adds one to a counter per line (tally) and one
//     to the closure pair the allow went through, whose count sits beside
//     the reached name in the closure the decision has just read
//     (reached), so the decision path does no map look-up, allocation,
//     lock or locked instruction for it, and touches one counter's
//     memory besides its own; the g lines of a pair are found at flush
//     time, once per pair and loaded policy;
//   - casbin's own Enforce (models outside the index) names its p row
//     (EnforceEx), and the g lines are found by walking the links then.
//
// Every few seconds each instance adds its counts to Redis in one script
// call (flushUsage): a hash per UTC day of counts per line, and a hash of
// each line's last use, keyed by the line's normalised text (normalLine),
// so moving or re-spacing a line keeps its history. Memory is bounded by
// the policy: counters per line and per closure pair, never per caller.

// usageKeep is how long a day's counts are kept in Redis: the longest
// window `policy usage --since` accepts.
const usageKeep = 400 * 24 * time.Hour

// MaxUsageWindow is the longest window `facade policy usage --since` reads.
const MaxUsageWindow = usageKeep

// usagePrefix holds the usage hashes; the hash tag puts them in one
// cluster slot, as the flush script needs.
const usagePrefix = "facade:policy-usage:{u}:"

// usageChunk is how many lines one script call carries: a policy-sized
// first flush is a few calls, not one huge one.
const usageChunk = 2000

func usageDayKey(t time.Time) string { return usagePrefix + "day:" + t.UTC().Format(time.DateOnly) }

const usageLastKey = usagePrefix + "last"

// lineUse counts one loaded policy's decisions per line.
type lineUse struct {
	rules tally // per state.rules index; the index decider counts closure pairs in its closures (reached)

	linksOnce sync.Once
	links     map[string]map[string][]link // role -> name -> its links, with the rule of each

	roleChains sync.Map // roleFrom -> []int32: the g lines from a name to role:R

	casbinOnce sync.Once
	casbinRows map[string]int32 // casbin decider: p row fields joined by \x00 -> rule index

	// the flusher's alone (usageBook.mu)
	pairSent []uint32          // per closure pair: its count as of the last take
	chains   map[int32][]int32 // pair -> its g lines
	keys     []string          // per rule: normalLine; "" for the virtual row
}

type link struct {
	to   string
	rule int32
}

type roleFrom struct{ from, role string }

func newLineUse(st *state) *lineUse {
	u := &lineUse{rules: newTally(len(st.rules) + 1), chains: map[int32][]int32{}}
	if x, ok := st.decider.(*index); ok && len(x.rules) > len(st.rules) { // the virtual row of a policy without p rows
		u.rules = newTally(len(x.rules))
	}
	return u
}

// tally is counters decisions add to with a plain increment, not a
// locked one: an atomic add waits for the counter's cache line before the
// decision goes on (BenchmarkDecide's usage-cost of an allow through a
// team: 1.08 with atomic adds, within noise with these). The price: two
// cores adding to one counter at the same instant may lose one of the
// two; a used line never reads zero, and the counts are evidence of use,
// not accounting. Counters only grow (wrapping at 2^32, far beyond a
// flush interval's decisions); the flusher sends the growth since it
// last looked.
type tally struct {
	n    []uint32 // added to by decisions
	sent []uint32 // the flusher's: n as of its last take
}

func newTally(size int) tally { return tally{n: make([]uint32, size), sent: make([]uint32, size)} }

// bump adds one to counter i. The race detector is told to look away:
// the race is the design (see tally).
//
//go:norace
func (t *tally) bump(i int32) { t.n[i]++ }

// bump adds one to the pair's count, as tally.bump does.
//
//go:norace
func (r *reached) bump() { r.uses++ }

// take returns how much counter i grew since the last take.
func (t *tally) take(i int) uint32 {
	cur := atomic.LoadUint32(&t.n[i])
	grew := cur - t.sent[i]
	t.sent[i] = cur
	return grew
}

// normalLine is the line's identity for usage: its type and fields as
// casbin reads them, written back with casbin's CSV quoting, so spacing
// and needless quotes do not change it.
func normalLine(r rule) string {
	var b strings.Builder
	b.WriteString(r.ptype)
	for _, f := range r.fields {
		b.WriteString(", ")
		b.WriteString(csvQuote(f))
	}
	return b.String()
}

// credit counts the index decision d on (q, obj).
func (x *index) credit(u *lineUse, q subject, obj string, d *decision) {
	if d.denyAt >= 0 {
		u.rules.bump(int32(d.denyAt))
		return
	}
	if d.allowAt < 0 {
		return
	}
	u.rules.bump(int32(d.allowAt))
	// Most allows come straight from the request's own values (no g line),
	// or through a name of its closure (one count, no call).
	if (d.allowSi > 0 || !d.subs.self) && !d.subs.creditNear(d.allowSi) {
		x.creditColumn(u, x.shape.subRole, x.subs, q.id, &q, &d.subs, d.allowSi, d.allowSub)
	}
	if (d.allowOi > 0 || !d.objs.self && d.allowOi == 0) && !d.objs.creditNear(d.allowOi) {
		x.creditColumn(u, x.shape.objRole, x.objs, obj, &q, &d.objs, d.allowOi, d.allowObj)
	}
}

// creditNear counts the pair at candidate pos when it is one of the
// request value's own closure, and says whether it did; the rest
// (literals, a token's groups, a walk) is creditColumn's.
func (c *column) creditNear(pos int32) bool {
	if c.walked || pos < 0 {
		return false
	}
	if c.self {
		pos--
	}
	if pos < 0 || pos >= int32(len(c.cl.reach)) {
		return false
	}
	c.cl.reach[pos].bump()
	return true
}

// creditColumn credits the g lines from name to the candidate at pos
// (via), built as c says (index.run).
func (x *index) creditColumn(u *lineUse, role string, cl map[string]closure, name string, q *subject, c *column, pos int32, via string) {
	if pos < 0 || role == "" {
		return
	}
	if c.self {
		if pos == 0 {
			return // the request's own value: no g line
		}
		pos--
	}
	if c.walked { // rare: a principal that is itself a group; nil for a literal
		u.credits(u.chain(x.rules, role, name, via, *q))
		return
	}
	if pos < int32(len(c.cl.reach)) {
		c.cl.reach[pos].bump()
		return
	}
	pos -= int32(len(c.cl.reach))
	if role != groupRole || name != q.id {
		return // a literal the matcher names
	}
	for _, g := range q.groups { // reachFrom's order: each group, then what it reaches
		if pos == 0 {
			return // the token's group itself: no line
		}
		pos--
		gc := cl[g]
		if pos < gc.near {
			gc.reach[pos].bump()
			return
		}
		pos -= gc.near
	}
}

// credits counts one decision for each of rules.
func (u *lineUse) credits(rules []int32) {
	for _, r := range rules {
		u.rules.bump(r)
	}
}

// linksOf returns role's links by name, built once per loaded policy.
func (u *lineUse) linksFor(rules []rule, role string) map[string][]link {
	u.linksOnce.Do(func() {
		u.links = map[string]map[string][]link{}
		for i, r := range rules {
			if !strings.HasPrefix(r.ptype, "g") || len(r.fields) < 2 {
				continue
			}
			m := u.links[r.ptype]
			if m == nil {
				m = map[string][]link{}
				u.links[r.ptype] = m
			}
			m[r.fields[0]] = append(m[r.fields[0]], link{r.fields[1], int32(i)})
		}
	})
	return u.links[role]
}

// chain returns the rules of the shortest path of role's links from
// from to to (within maxDepth, as casbin follows them), with q's token
// links (q.id -> each group, no line) added; nil when there is none.
func (u *lineUse) chain(rules []rule, role, from, to string, q subject) []int32 {
	if from == to {
		return nil
	}
	links := u.linksFor(rules, role)
	type step struct {
		from string
		rule int32 // -1: a token's link
	}
	parent := map[string]step{from: {}}
	level := []string{from}
	for depth := 1; depth <= maxDepth && len(level) > 0; depth++ {
		var next []string
		for _, n := range level {
			out := links[n]
			if role == groupRole && n == q.id && len(q.groups) > 0 {
				out = slices.Clip(out)
				for _, g := range q.groups {
					out = append(out, link{g, -1})
				}
			}
			for _, l := range out {
				if _, seen := parent[l.to]; seen {
					continue
				}
				parent[l.to] = step{n, l.rule}
				if l.to == to {
					var path []int32
					for m := to; m != from; m = parent[m].from {
						if r := parent[m].rule; r >= 0 {
							path = append(path, r)
						}
					}
					return path
				}
				next = append(next, l.to)
			}
		}
		level = next
	}
	return nil
}

// usedRole credits the g lines that gave p role when the policy, not the
// token, gave it (the grade rules read it).
func (st *state) usedRole(q subject, tokenRole, role string) {
	u := st.use
	if u == nil || tokenRole == role {
		return
	}
	from := ""
	if _, ok := st.roles[q.id][role]; ok {
		from = q.id
	} else {
		for _, g := range q.groups {
			if d, ok := st.roles[g][role]; ok && d+1 <= maxDepth {
				from = g
				break
			}
		}
	}
	if from == "" {
		return
	}
	k := roleFrom{from, role}
	rules, ok := u.roleChains.Load(k)
	if !ok {
		rules, _ = u.roleChains.LoadOrStore(k, u.chain(st.rules, groupRole, from, prefixRole+role, subject{}))
	}
	u.credits(rules.([]int32))
}

// creditCasbin counts a decision casbin made with row (EnforceEx's
// explanation): the row, and for an allow the g lines from the request's
// sub and obj to the row's, along whichever role definition has a path.
func (d *casbinDecider) creditCasbin(u *lineUse, rules []rule, q subject, obj string, allow bool, row []string) {
	if len(row) < 2 {
		return
	}
	u.casbinOnce.Do(func() {
		u.casbinRows = map[string]int32{}
		for i, r := range rules {
			if r.ptype == "p" {
				u.casbinRows[strings.Join(r.fields, "\x00")] = int32(i)
			}
		}
	})
	i, ok := u.casbinRows[strings.Join(row, "\x00")]
	if !ok {
		return
	}
	u.rules.bump(i)
	if !allow {
		return
	}
	for _, col := range [][2]string{{q.id, row[0]}, {obj, row[1]}} {
		for _, role := range d.roles {
			if path := u.chain(rules, role, col[0], col[1], q); path != nil {
				u.credits(path)
				break
			}
		}
	}
}

// usageBook is an Authorizer's usage recording: the policies retired by
// a reload whose counts are still to be written, and counts a failed
// write keeps for the next.
type usageBook struct {
	mu       sync.Mutex
	retired  []retiredState
	pending  map[string]uint64
	prunedOn string        // the UTC day this instance last saw the last-use hash pruned
	writes   atomic.Uint64 // script calls sent to Redis (UsageWrites)
}

type retiredState struct {
	st      *state
	flushes int
}

// retire keeps st's counts for the next flushes: a decision that started
// on it may still be counting.
func (b *usageBook) retire(st *state) {
	if st == emptyState || st.use == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.retired = append(b.retired, retiredState{st: st})
}

// take moves st's counts into out (by normalised line), since the last take.
func (u *lineUse) take(st *state, out map[string]uint64) {
	if u.keys == nil {
		u.keys = make([]string, len(u.rules.n))
		for i, r := range st.rules {
			u.keys[i] = normalLine(r)
		}
	}
	viaPairs := map[int32]uint64{} // rule -> uses through closure pairs
	if x, _ := st.decider.(*index); x != nil {
		u.takePairs(st, x, viaPairs)
	}
	for i := range u.rules.n {
		if n := uint64(u.rules.take(i)) + viaPairs[int32(i)]; n > 0 && i < len(u.keys) && u.keys[i] != "" && st.rules[i].line > 0 {
			out[u.keys[i]] += n
		}
	}
}

// takePairs adds to via, per g line, how many decisions went through
// each closure pair since the last take: the pair's growth credited to
// every line of its path, found once per pair and loaded policy.
func (u *lineUse) takePairs(st *state, x *index, via map[int32]uint64) {
	if u.pairSent == nil {
		u.pairSent = make([]uint32, x.pairs)
	}
	for _, rc := range x.closures {
		for name, c := range rc.cl {
			for j := range c.reach {
				p := c.base + int32(j)
				cur := atomic.LoadUint32(&c.reach[j].uses)
				n := cur - u.pairSent[p]
				if n == 0 {
					continue
				}
				u.pairSent[p] = cur
				path, ok := u.chains[p]
				if !ok {
					path = u.chain(st.rules, rc.role, name, c.reach[j].name, subject{})
					u.chains[p] = path
				}
				for _, r := range path {
					via[r] += uint64(n)
				}
			}
		}
	}
}

// numberPairs gives each closure of cl its pair numbers, from next on,
// and returns the next free number.
func numberPairs(cl map[string]closure, next int32) int32 {
	for name, c := range cl {
		c.base = next
		next += int32(len(c.reach))
		cl[name] = c
	}
	return next
}

// usageScript adds one flush's counts to the day's hash (KEYS[1]) and
// raises each line's last use (KEYS[2]) to now unless an instance already
// wrote a later one: ARGV = ttl seconds, now (unix seconds), then line,
// count pairs.
var usageScript = redis.NewScript(`
local now = tonumber(ARGV[2])
for i = 3, #ARGV, 2 do
  redis.call('HINCRBY', KEYS[1], ARGV[i], ARGV[i + 1])
  local last = tonumber(redis.call('HGET', KEYS[2], ARGV[i]) or '0')
  if last < now then redis.call('HSET', KEYS[2], ARGV[i], now) end
end
redis.call('EXPIRE', KEYS[1], ARGV[1])
redis.call('EXPIRE', KEYS[2], ARGV[1])
return 1
`)

// FlushUsage adds the counts since the last flush to Redis (one script
// call per 2,000 lines used). On a failure the counts are kept for the
// next flush and the error returned. A no-op without RecordUsage.
func (a *Authorizer) FlushUsage(ctx context.Context, rdb redis.UniversalClient) error {
	b := a.usage
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	counts := b.pending
	if counts == nil {
		counts = map[string]uint64{}
	}
	b.pending = nil
	kept := b.retired[:0]
	for _, r := range b.retired {
		r.st.use.take(r.st, counts)
		if r.flushes++; r.flushes < 2 {
			kept = append(kept, r)
		}
	}
	b.retired = kept
	if st := a.state(); st.use != nil {
		st.use.take(st, counts)
	}
	now := a.now()
	b.pruneLastUse(ctx, rdb, now)
	if len(counts) == 0 {
		return nil
	}
	lines := make([]string, 0, len(counts))
	for l := range counts {
		lines = append(lines, l)
	}
	slices.Sort(lines)
	keys := []string{usageDayKey(now), usageLastKey}
	for start := 0; start < len(lines); start += usageChunk {
		chunk := lines[start:min(start+usageChunk, len(lines))]
		args := make([]any, 0, 2+2*len(chunk))
		args = append(args, int64(usageKeep/time.Second), now.Unix())
		for _, l := range chunk {
			args = append(args, l, counts[l])
		}
		b.writes.Add(1)
		if err := usageScript.Run(ctx, rdb, keys, args...).Err(); err != nil {
			a.metrics.PolicyUsageFlushes.WithLabelValues("error").Inc()
			b.pending = map[string]uint64{}
			for _, l := range lines[start:] {
				b.pending[l] = counts[l]
			}
			return fmt.Errorf("authz: write policy usage: %w", err)
		}
	}
	a.metrics.PolicyUsageFlushes.WithLabelValues("ok").Inc()
	return nil
}

// pruneScript removes the fields of the last-use hash (KEYS[1]) named in
// ARGV[2:] whose last use is still before ARGV[1] (unix seconds): a line
// an instance credited since the scan keeps its entry.
var pruneScript = redis.NewScript(`
local cutoff = tonumber(ARGV[1])
for i = 2, #ARGV do
  local last = tonumber(redis.call('HGET', KEYS[1], ARGV[i]) or 'nil')
  if last and last < cutoff then redis.call('HDEL', KEYS[1], ARGV[i]) end
end
return 1
`)

// pruneLastUse drops, once a UTC day across instances, the last uses
// older than usageKeep: a line removed from the policy would otherwise
// keep its entry in Redis for ever (the day hashes expire by themselves).
// A failure is tried again at the next flush; the counts do not wait for
// it.
func (b *usageBook) pruneLastUse(ctx context.Context, rdb redis.UniversalClient, now time.Time) {
	day := now.UTC().Format(time.DateOnly)
	if b.prunedOn == day {
		return
	}
	first, err := rdb.SetNX(ctx, usagePrefix+"pruned:"+day, 1, 48*time.Hour).Result()
	if err != nil {
		return
	}
	if first && pruneOlder(ctx, rdb, now.Add(-usageKeep).Unix()) != nil {
		rdb.Del(ctx, usagePrefix+"pruned:"+day) // let this or another instance try again
		return
	}
	b.prunedOn = day
}

// pruneOlder scans the last-use hash and removes entries before cutoff.
func pruneOlder(ctx context.Context, rdb redis.UniversalClient, cutoff int64) error {
	var cursor uint64
	for {
		kv, next, err := rdb.HScan(ctx, usageLastKey, cursor, "", 1000).Result()
		if err != nil {
			return err
		}
		args := []any{cutoff}
		for i := 0; i+1 < len(kv); i += 2 {
			if sec, err := strconv.ParseInt(kv[i+1], 10, 64); err == nil && sec < cutoff {
				args = append(args, kv[i])
			}
		}
		if len(args) > 1 {
			if err := pruneScript.Run(ctx, rdb, []string{usageLastKey}, args...).Err(); err != nil {
				return err
			}
		}
		if cursor = next; cursor == 0 {
			return nil
		}
	}
}

// UsageWrites is how many script calls usage recording has sent to Redis.
func (a *Authorizer) UsageWrites() uint64 {
	if a.usage == nil {
		return 0
	}
	return a.usage.writes.Load()
}

// RecordUsage flushes the usage counts every interval until ctx ends (a
// failed flush is logged and retried with the next). The caller flushes
// once more after the last request (serve does, after draining).
func (a *Authorizer) RecordUsage(ctx context.Context, rdb redis.UniversalClient, every time.Duration) {
	if a.usage == nil || every <= 0 {
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	failing := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			fctx, cancel := context.WithTimeout(ctx, every)
			err := a.FlushUsage(fctx, rdb)
			cancel()
			if err != nil && !failing {
				a.log.Warn("could not write policy usage to Redis; the counts are kept for the next try", "err", err)
			}
			failing = err != nil
		}
	}
}

// Usage is what Redis holds about the lines' use in a window: the uses
// per normalised line, summed over the UTC days from the day of since to
// the day of now, and each line's last use (any time in the last 400
// days).
type Usage struct {
	Since, Now time.Time
	Uses       map[string]uint64
	Last       map[string]time.Time
}

// ReadUsage reads the usage of the window (now-window, now] from Redis.
func ReadUsage(ctx context.Context, rdb redis.UniversalClient, now time.Time, window time.Duration) (*Usage, error) {
	if window <= 0 || window > MaxUsageWindow {
		return nil, fmt.Errorf("authz: a usage window is 1 second to %d days", MaxUsageWindow/(24*time.Hour))
	}
	u := &Usage{Since: now.Add(-window), Now: now, Uses: map[string]uint64{}, Last: map[string]time.Time{}}
	pipe := rdb.Pipeline()
	var days []*redis.MapStringStringCmd
	first := u.Since.UTC().Truncate(24 * time.Hour)
	for d := first; !d.After(now.UTC()); d = d.Add(24 * time.Hour) {
		days = append(days, pipe.HGetAll(ctx, usageDayKey(d)))
	}
	last := pipe.HGetAll(ctx, usageLastKey)
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("authz: read policy usage: %w", err)
	}
	for _, d := range days {
		for line, v := range d.Val() {
			n, _ := strconv.ParseUint(v, 10, 64)
			u.Uses[line] += n
		}
	}
	u.readLast(last.Val())
	return u, nil
}

// ReadLastUse reads each line's last use only (for the access review).
func ReadLastUse(ctx context.Context, rdb redis.UniversalClient) (*Usage, error) {
	last, err := rdb.HGetAll(ctx, usageLastKey).Result()
	if err != nil {
		return nil, fmt.Errorf("authz: read policy usage: %w", err)
	}
	u := &Usage{Uses: map[string]uint64{}, Last: map[string]time.Time{}}
	u.readLast(last)
	return u, nil
}

func (u *Usage) readLast(last map[string]string) {
	for line, v := range last {
		if sec, err := strconv.ParseInt(v, 10, 64); err == nil {
			u.Last[line] = time.Unix(sec, 0).UTC()
		}
	}
}
