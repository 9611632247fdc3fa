package authz

import (
	"fmt"
	"slices"
)

// maxDepth is how many g links casbin's default role manager follows from a
// name (NewRoleManagerImpl(10) in every casbin v2 enforcer). A longer chain
// grants nothing in casbin, so it grants nothing here; policy check warns.
const maxDepth = 10

// index decides a recognized model (model.go) without scanning p rows:
//
//   - every name that has g links gets its closure, precomputed at load:
//     the names it reaches within maxDepth links that appear in some p row
//     (a principal's groups, a student's classes, a plan's project);
//   - p rows sit in one map keyed by their (sub, obj, act), so a decision
//     is a map lookup per candidate: (the sub, its groups, the literal
//     subs the matcher names) x (the obj, its groups, literal objs) x
//     (the act, literal acts);
//   - under a matching function, rows whose object matches one key only
//     sit in a second map keyed by that key, and the others per (sub, act)
//     in buckets keyed by the literal prefix every key they match starts
//     with, each tested with the function's own semantics (patterns.go).
//
// Nothing is written while deciding, so callers who enumerate identifiers
// cannot grow memory, and decisions on many cores do not contend.
type index struct {
	shape    *shape
	rules    []rule             // every loaded rule, file order
	subs     map[string]closure // closure[role that takes r.sub], or nil
	objs     map[string]closure // closure[role that takes r.obj], or nil
	graphs   map[string]*graph  // the role definitions the matcher uses, for token groups
	rows     map[rowKey]hit     // by the row's own fields
	keyed    map[rowKey]hit     // under objMatch: rows matching one key, by that key
	patterns map[subAct]*patternSet
	compiled []objPattern // per rule index, under objMatch
	pairs    int32        // closure pairs numbered by closure.base, over every role definition
	closures []roleClosures
}

// roleClosures are one role definition's closures (usage reads the pairs
// back from them).
type roleClosures struct {
	role string
	cl   map[string]closure
}

// closure is what one name reaches through a role definition: the names
// within maxDepth links that appear in some p row, nearest first.
type closure struct {
	reach []reached
	near  int32 // reach[:near] are within maxDepth-1 links: what a token's group, one link away, reaches
	// base numbers the (name, reach[j]) pairs for the flusher's books
	// (usage.go): pair j is base+j.
	base int32
}

// reached is one name a closure reaches, with the decisions that went
// from the closure's name to it (usage.go). The count sits beside the
// name the decision has just read into its candidates, so counting a
// pair touches no other memory: a separate array of 500,000 pair
// counters cost an allow a cache miss (BenchmarkDecide's usage-cost).
type reached struct {
	name string
	uses uint32
}

// names returns the reached names, in order.
func (c closure) names() []string {
	out := make([]string, len(c.reach))
	for i, r := range c.reach {
		out[i] = r.name
	}
	return out
}

type rowKey struct{ sub, obj, act string }
type subAct struct{ sub, act string }

// hit holds, for one (sub, obj, act), the first allow and first deny row
// (rule index + 1; 0 for none).
type hit struct{ allow, deny int32 }

func (h hit) add(i int32, eff int) hit {
	if eff > 0 && h.allow == 0 {
		h.allow = i + 1
	}
	if eff < 0 && h.deny == 0 {
		h.deny = i + 1
	}
	return h
}

// patternSet is the wildcard rows of one (sub, act), bucketed by the
// literal prefix every key they match starts with: only buckets whose
// prefix starts the object are tested.
type patternSet struct {
	byPrefix map[string][]int32 // prefix -> rule indexes
	lens     []int              // distinct prefix lengths, ascending
}

// newIndex builds the index of rules (as casbin loaded them) for shape s.
// Patterns were checked (checkPatterns): one that does not compile here
// cannot be, and is an error.
func newIndex(s *shape, rules []rule) (*index, error) {
	x := &index{shape: s, rules: rules, rows: map[rowKey]hit{}, keyed: map[rowKey]hit{}, patterns: map[subAct]*patternSet{}}
	matters := map[string]bool{}
	var pRules int
	for _, r := range rules {
		if r.ptype == "p" {
			pRules++
		}
	}
	if pRules == 0 {
		// With no p row casbin evaluates the matcher once with every p value
		// empty and allows when it holds: a virtual row ("", "", "").
		x.rules = append(slices.Clip(x.rules), rule{ptype: "p", fields: []string{"", "", "", "allow"}, text: "(no p rows: casbin evaluates the matcher once with empty p values)"})
	}
	if s.objMatch != "" {
		x.compiled = make([]objPattern, len(x.rules))
	}
	for i, r := range x.rules {
		if r.ptype != "p" {
			continue
		}
		matters[r.fields[0]], matters[r.fields[1]] = true, true
		if err := x.addRow(int32(i), r.fields); err != nil {
			return nil, err
		}
	}
	closures := map[string]map[string]closure{}
	x.graphs = map[string]*graph{}
	for _, g := range []string{s.subRole, s.objRole} {
		if g != "" && closures[g] == nil {
			x.graphs[g] = newGraph(linksOf(rules, g))
			closures[g] = x.graphs[g].closures(matters)
		}
	}
	x.subs, x.objs = closures[s.subRole], closures[s.objRole]
	for g, cl := range closures {
		x.pairs = numberPairs(cl, x.pairs)
		x.closures = append(x.closures, roleClosures{g, cl})
	}
	return x, nil
}

// effect returns +1 allow, -1 deny, 0 ignored, as casbin's Enforce reads a row.
func (x *index) effect(fields []string) int {
	if !x.shape.eft || len(fields) < 4 {
		return 1
	}
	switch fields[3] {
	case "allow":
		return 1
	case "deny":
		if x.shape.denyWins {
			return -1
		}
	}
	return 0 // casbin: Indeterminate (or a deny the effect never consults)
}

func (x *index) addRow(i int32, f []string) error {
	eff := x.effect(f)
	if eff == 0 {
		return nil
	}
	k := rowKey{f[0], f[1], f[2]}
	x.rows[k] = x.rows[k].add(i, eff)
	if x.shape.objMatch == "" {
		return nil
	}
	pat, err := compilePattern(x.shape.objMatch, f[1])
	if err != nil {
		return fmt.Errorf("object %q is not a valid %s pattern", f[1], x.shape.objMatch)
	}
	x.compiled[i] = pat
	if pat.literal {
		k := rowKey{f[0], pat.prefix, f[2]}
		x.keyed[k] = x.keyed[k].add(i, eff)
		return nil
	}
	sa := subAct{f[0], f[2]}
	ps := x.patterns[sa]
	if ps == nil {
		ps = &patternSet{byPrefix: map[string][]int32{}}
		x.patterns[sa] = ps
	}
	if _, seen := ps.byPrefix[pat.prefix]; !seen {
		ps.lens = append(ps.lens, len(pat.prefix))
		slices.Sort(ps.lens)
		ps.lens = slices.Compact(ps.lens)
	}
	ps.byPrefix[pat.prefix] = append(ps.byPrefix[pat.prefix], i)
	return nil
}

// enforce is casbin's Enforce(sub, obj, act) for the indexed model, with
// the subject's token groups as g lines.
func (x *index) enforce(q subject, obj, act string) bool {
	return x.enforceUsed(q, obj, act, nil)
}

// enforceUsed is enforce, counting the lines the decision used in u (nil:
// none). enforce is this with nil, so both run the same code and differ
// by the count alone.
func (x *index) enforceUsed(q subject, obj, act string, u *lineUse) bool {
	d := x.run(q, obj, act, nil)
	if u != nil {
		x.credit(u, q, obj, &d)
	}
	allow, _ := d.result()
	return allow
}

// reach returns the names name reaches through role definition role (with
// closures cl), with the subject's token groups as links from q.id in
// groupRole: without groups, the closure built at load.
func (x *index) reach(role string, cl map[string]closure, name string, q subject) []string {
	c, more, _ := x.reachFrom(role, cl, name, q)
	return append(c.names(), more...)
}

// reachFrom is reach in two parts: name's own closure (whose pairs number
// the first len(c.reach) names reached) and the names reached beyond it
// through the token's groups. walked: name reaches q.id (a principal that
// is itself a group, rare), the names were walked with the token's links
// and are all in more (c is empty).
func (x *index) reachFrom(role string, cl map[string]closure, name string, q subject) (c closure, more []string, walked bool) {
	if role == "" {
		return closure{}, nil, false
	}
	c = cl[name]
	if len(q.groups) == 0 || role != groupRole {
		return c, nil, false
	}
	if name == q.id {
		// A group is one link away; what it reaches counts within one
		// link fewer. A shortest path never comes back through q.id.
		for _, g := range q.groups {
			more = append(more, g)
			for _, r := range cl[g].reach[:cl[g].near] {
				more = append(more, r.name)
			}
		}
		return c, more, false
	}
	if g := x.graphs[role]; g != nil && g.hasMembers(q.id) {
		return closure{}, g.reachWith(name, q.id, q.groups), true
	}
	return c, nil, false
}

// candidates returns the values of one column a p row may hold to match
// the request value v: v itself when the term has equality or a role
// (g(v, v) holds), what v reaches through the role (its closure c, then
// more), and the literals.
func candidates(buf []string, v string, self bool, c closure, more, lits []string) []string {
	if self {
		buf = append(buf, v)
	}
	for _, r := range c.reach {
		buf = append(buf, r.name)
	}
	buf = append(buf, more...)
	return append(buf, lits...)
}

// decide returns the decision and the deciding rule's index (-1 when no
// rule matched). seen, when not nil, is told every matching rule (tools).
func (x *index) decide(q subject, obj, act string, seen func(ruleIdx int, viaSub, viaObj string)) (bool, int) {
	d := x.run(q, obj, act, seen)
	return d.result()
}

// run is decide, returning the whole decision: where in the candidate
// lists the allowing row was found, for usage (usage.go).
func (x *index) run(q subject, obj, act string, seen func(ruleIdx int, viaSub, viaObj string)) decision {
	s := x.shape
	d := decision{allowAt: -1, denyAt: -1, seen: seen, denyWins: s.denyWins}
	if s.guard != nil && s.guard.MatchString(q.id) {
		return d
	}
	// Candidate lists live on the stack: a principal in a few dozen groups
	// (20 teams and their parents in the contract-sized benchmark) fits,
	// and a heap-grown list on every decision multiplied its p99 by five
	// through garbage collection.
	var sb, ob, ab [64]string
	var more []string
	d.subs.cl, more, d.subs.walked = x.reachFrom(s.subRole, x.subs, q.id, q)
	d.subs.self = s.subEq || s.subRole != ""
	subs := candidates(sb[:0], q.id, d.subs.self, d.subs.cl, more, s.subLits)
	d.objs.cl, more, d.objs.walked = x.reachFrom(s.objRole, x.objs, obj, q)
	d.objs.self = s.objEq || s.objRole != ""
	objs := candidates(ob[:0], obj, d.objs.self, d.objs.cl, more, s.objLits)
	acts := candidates(ab[:0], act, s.actEq, closure{}, nil, s.actLits)
	for si, sub := range subs {
		for _, a := range acts {
			for oi, o := range objs {
				if d.hit(x.rows[rowKey{sub, o, a}], sub, o, int32(si), int32(oi)) {
					return d
				}
			}
			if s.objMatch != "" && x.matchPatterns(&d, sub, obj, a, int32(si)) {
				return d
			}
		}
	}
	return d
}

// matchPatterns notes the rows under the matching function that match obj
// for (sub, act); true when the decision is made.
func (x *index) matchPatterns(d *decision, sub, obj, act string, si int32) bool {
	if d.hit(x.keyed[rowKey{sub, obj, act}], sub, obj, si, -1) {
		return true
	}
	ps := x.patterns[subAct{sub, act}]
	if ps == nil {
		return false
	}
	for _, n := range ps.lens {
		if n > len(obj) {
			break
		}
		for _, ri := range ps.byPrefix[obj[:n]] {
			if !x.compiled[ri].match(obj) {
				continue
			}
			if d.hit(hit{}.add(ri, x.effect(x.rules[ri].fields)), sub, x.rules[ri].fields[1], si, -1) {
				return true
			}
		}
	}
	return false
}

// decision collects matching rows as casbin's effect reads them.
type decision struct {
	allowAt, denyAt int
	denyWins        bool
	seen            func(ruleIdx int, viaSub, viaObj string)
	// Where the allowing row's sub and obj are in the candidate lists
	// (position in subs, position in objs; -1 for an object matched by a
	// pattern or key, which is the request's own), and what those lists were made of: usage
	// credits the g lines from the request's values to them.
	allowSi, allowOi   int32
	allowSub, allowObj string // the allowing row's sub and obj (or pattern)
	subs, objs         column
}

// column is how one column's candidates were made (candidates).
type column struct {
	self   bool    // the request value comes first
	cl     closure // the request value's closure: the reached names start with cl.reach
	walked bool    // the reached names were walked with the token's links (reachWith)
}

// hit notes h's rows, found at candidates si (sub) and oi (obj); true
// when the decision is made (only without seen, which wants every
// matching row).
func (d *decision) hit(h hit, sub, obj string, si, oi int32) bool {
	if h.deny != 0 {
		d.note(int(h.deny-1), false, sub, obj, si, oi)
		if d.seen == nil {
			return true
		}
	}
	if h.allow != 0 {
		d.note(int(h.allow-1), true, sub, obj, si, oi)
		return d.seen == nil && !d.denyWins
	}
	return false
}

func (d *decision) note(i int, allow bool, sub, obj string, si, oi int32) {
	if d.seen != nil {
		d.seen(i, sub, obj)
	}
	if allow && (d.allowAt < 0 || i < d.allowAt) {
		d.allowAt, d.allowSi, d.allowOi, d.allowSub, d.allowObj = i, si, oi, sub, obj
	} else if !allow && (d.denyAt < 0 || i < d.denyAt) {
		d.denyAt = i
	}
}

func (d *decision) result() (bool, int) {
	if d.denyAt >= 0 {
		return false, d.denyAt
	}
	return d.allowAt >= 0, d.allowAt
}

func (x *index) kind() string { return "index" }

// linksOf returns the (member, group) pairs of role definition g.
func linksOf(rules []rule, g string) [][2]string {
	var links [][2]string
	for _, r := range rules {
		if r.ptype == g {
			links = append(links, [2]string{r.fields[0], r.fields[1]})
		}
	}
	return links
}

// graph is a role definition's links with names interned, for closures,
// chains (explain) and reverse walks (who).
type graph struct {
	id    map[string]int32
	names []string
	out   [][]int32
	into  []bool // the name has members (some link ends at it)
}

func newGraph(links [][2]string) *graph {
	g := &graph{id: map[string]int32{}}
	intern := func(n string) int32 {
		if i, ok := g.id[n]; ok {
			return i
		}
		g.id[n] = int32(len(g.names))
		g.names = append(g.names, n)
		g.out = append(g.out, nil)
		g.into = append(g.into, false)
		return g.id[n]
	}
	for _, l := range links {
		a, b := intern(l[0]), intern(l[1])
		g.out[a] = append(g.out[a], b)
		g.into[b] = true
	}
	return g
}

// hasMembers reports whether some link ends at name.
func (g *graph) hasMembers(name string) bool {
	i, ok := g.id[name]
	return ok && g.into[i]
}

// reach calls visit for the names start reaches in 1..maxDepth links, in
// breadth-first order with the parent and depth of each (for chains), as
// casbin's hasLinkHelper walks level by level.
func (g *graph) reach(start int32, stamp []uint32, gen uint32, visit func(n, parent int32, depth int)) {
	level := []int32{start}
	stamp[start] = gen
	for depth := 1; depth <= maxDepth && len(level) > 0; depth++ {
		var next []int32
		for _, n := range level {
			for _, m := range g.out[n] {
				if stamp[m] != gen {
					stamp[m] = gen
					visit(m, n, depth)
					next = append(next, m)
				}
			}
		}
		level = next
	}
}

// closures returns, for every name with links, the names it reaches within
// maxDepth that are in matters (the others cannot change a decision).
func (g *graph) closures(matters map[string]bool) map[string]closure {
	stamp := make([]uint32, len(g.names))
	out := make(map[string]closure, len(g.names))
	for i := range g.names {
		if len(g.out[i]) == 0 {
			continue
		}
		var c closure
		g.reach(int32(i), stamp, uint32(i+1), func(n, _ int32, depth int) {
			if matters[g.names[n]] {
				c.reach = append(c.reach, reached{name: g.names[n]})
				if depth < maxDepth {
					c.near = int32(len(c.reach))
				}
			}
		})
		if c.reach != nil {
			c.reach = slices.Clip(c.reach)
			out[g.names[i]] = c
		}
	}
	return out
}

// buildClosures is graph.closures over links, names only.
func buildClosures(links [][2]string, matters map[string]bool) map[string][]string {
	out := map[string][]string{}
	for name, c := range newGraph(links).closures(matters) {
		out[name] = c.names()
	}
	return out
}

// reachWith returns every name start reaches within maxDepth links with
// the links member -> each of groups added (the token's memberships).
func (g *graph) reachWith(start, member string, groups []string) []string {
	next := func(n string) []string {
		var out []string
		if i, ok := g.id[n]; ok {
			for _, m := range g.out[i] {
				out = append(out, g.names[m])
			}
		}
		if n == member {
			out = append(out, groups...)
		}
		return out
	}
	seen := map[string]bool{start: true}
	var reached []string
	level := []string{start}
	for depth := 1; depth <= maxDepth && len(level) > 0; depth++ {
		var following []string
		for _, n := range level {
			for _, m := range next(n) {
				if !seen[m] {
					seen[m] = true
					reached = append(reached, m)
					following = append(following, m)
				}
			}
		}
		level = following
	}
	return reached
}

// chain returns the shortest list of names from -> ... -> to along links
// (within maxDepth), or nil. from == to gives [from].
func (g *graph) chain(from, to string) []string {
	if from == to {
		return []string{from}
	}
	start, ok := g.id[from]
	if !ok {
		return nil
	}
	parent := map[int32]int32{}
	var found bool
	stamp := make([]uint32, len(g.names))
	g.reach(start, stamp, 1, func(n, p int32, _ int) {
		parent[n] = p
		if g.names[n] == to {
			found = true
		}
	})
	end, ok := g.id[to]
	if !found || !ok {
		return nil
	}
	var names []string
	for n := end; n != start; n = parent[n] {
		names = append(names, g.names[n])
	}
	names = append(names, from)
	slices.Reverse(names)
	return names
}

func sortedStrings(s []string) []string {
	slices.Sort(s)
	return slices.Compact(s)
}
