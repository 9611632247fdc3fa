package compiled

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Which lines are used (docs/policy.md, "Which lines are used"): with
// Uses, every decision a line took part in is counted, in memory, per
// compiled policy:
//
//   - an allow credits its p line and every g line on the way from the
//     request's sub and obj to that line's (memberships, nested teams,
//     enrollments, a token group's lines), and, for a grade, the g lines
//     that gave the role (g, X, role:R) when the token did not
//     (CreditLinks);
//   - a deny decided by a deny line credits that line alone; a denial
//     because nothing matched credits nothing;
//   - the index decider adds one to a counter per line (tally) and one
//     to the closure pair the allow went through, whose count sits beside
//     the reached name in the closure the decision has just read
//     (reached), so the decision path does no map look-up, allocation,
//     lock or locked instruction for it, and touches one counter's
//     memory besides its own; the g lines of a pair are found when the
//     counts are taken (take.go), once per pair and compiled policy;
//   - casbin's own Enforce (models outside the index) names its p row
//     (EnforceEx), and the g lines are found by walking the links then.
//
// Memory is bounded by the policy: counters per line and per closure
// pair, never per caller. Package grantusage takes the counts and writes
// them to Redis.

// Uses counts one compiled policy's decisions per line.
type Uses struct {
	pol   *Policy
	rules tally // per Policy.Rules index; the index decider counts closure pairs in its closures (reached)

	linksOnce sync.Once
	links     map[string]map[string][]link // role -> name -> its links, with the rule of each

	paths sync.Map // [2]string{from, to} -> []int32: the g lines from a name to another (CreditLinks)

	casbinOnce sync.Once
	casbinRows map[string]int32 // casbin decider: p row fields joined by \x00 -> rule index

	// the taker's alone (Take)
	pairSent []uint32          // per closure pair: its count as of the last take
	chains   map[int32][]int32 // pair -> its g lines
	keys     []string          // per rule: NormalLine; "" for the virtual row
}

type link struct {
	to   string
	rule int32
}

// NewUses returns counters for p's decisions (EnforceCounted).
func (p *Policy) NewUses() *Uses {
	u := &Uses{pol: p, rules: newTally(len(p.Rules) + 1), chains: map[int32][]int32{}}
	if x, ok := p.d.(*index); ok && len(x.rules) > len(p.Rules) { // the virtual row of a policy without p rows
		u.rules = newTally(len(x.rules))
	}
	return u
}

// tally is counters decisions add to with a plain increment, not a
// locked one: an atomic add waits for the counter's cache line before the
// decision goes on, which BenchmarkDecide's usage-cost shows on an allow
// through a team (docs/performance.md). The price: two cores adding to
// one counter at the same instant may lose one of the two; a used line
// never reads zero, and the counts are evidence of use, not accounting.
// Counters only grow (wrapping at 2^32, far beyond a flush interval's
// decisions); Take sends the growth since it last looked.
type tally struct {
	n    []uint32 // added to by decisions
	sent []uint32 // Take's: n as of its last take
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

// credit counts the index decision d on (q, obj).
func (x *index) credit(u *Uses, q Subject, obj string, d *decision) {
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
		x.creditColumn(u, x.shape.subRole, x.subs, q.ID, &q, &d.subs, d.allowSi, d.allowSub)
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
func (x *index) creditColumn(u *Uses, role string, cl map[string]closure, name string, q *Subject, c *column, pos int32, via string) {
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
	if role != GroupRole || name != q.ID {
		return // a literal the matcher names
	}
	for _, g := range q.Groups { // reachFrom's order: each group, then what it reaches
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
func (u *Uses) credits(rules []int32) {
	for _, r := range rules {
		u.rules.bump(r)
	}
}

// linksFor returns role's links by name, built once per loaded policy.
func (u *Uses) linksFor(rules []Rule, role string) map[string][]link {
	u.linksOnce.Do(func() {
		u.links = map[string]map[string][]link{}
		for i, r := range rules {
			if !strings.HasPrefix(r.Type, "g") || len(r.Fields) < 2 {
				continue
			}
			m := u.links[r.Type]
			if m == nil {
				m = map[string][]link{}
				u.links[r.Type] = m
			}
			m[r.Fields[0]] = append(m[r.Fields[0]], link{r.Fields[1], int32(i)})
		}
	})
	return u.links[role]
}

// chain returns the rules of the shortest path of role's links from
// from to to (within MaxDepth, as casbin follows them), with q's token
// links (q.ID -> each group, no line) added; nil when there is none.
func (u *Uses) chain(rules []Rule, role, from, to string, q Subject) []int32 {
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
	for depth := 1; depth <= MaxDepth && len(level) > 0; depth++ {
		var next []string
		for _, n := range level {
			out := links[n]
			if role == GroupRole && n == q.ID && len(q.Groups) > 0 {
				out = slices.Clip(out)
				for _, g := range q.Groups {
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

// CreditLinks counts one decision for each g line on the shortest path
// from -> ... -> to (role definition g, within MaxDepth): the lines that
// gave a principal role:R, when the grade rules read it. The path is
// found once per (from, to) and compiled policy.
func (u *Uses) CreditLinks(from, to string) {
	k := [2]string{from, to}
	rules, ok := u.paths.Load(k)
	if !ok {
		rules, _ = u.paths.LoadOrStore(k, u.chain(u.pol.Rules, GroupRole, from, to, Subject{}))
	}
	u.credits(rules.([]int32))
}

// creditCasbin counts a decision casbin made with row (EnforceEx's
// explanation): the row, and for an allow the g lines from the request's
// sub and obj to the row's, along whichever role definition has a path.
func (d *casbinDecider) creditCasbin(u *Uses, rules []Rule, q Subject, obj string, allow bool, row []string) {
	if len(row) < 2 {
		return
	}
	u.casbinOnce.Do(func() {
		u.casbinRows = map[string]int32{}
		for i, r := range rules {
			if r.Type == "p" {
				u.casbinRows[strings.Join(r.Fields, "\x00")] = int32(i)
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
	for _, col := range [][2]string{{q.ID, row[0]}, {obj, row[1]}} {
		for _, role := range d.roles {
			if path := u.chain(rules, role, col[0], col[1], q); path != nil {
				u.credits(path)
				break
			}
		}
	}
}
