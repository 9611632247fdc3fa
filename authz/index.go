package authz

import (
	"slices"
	"strings"
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
//   - literal p rows sit in one map keyed by (sub, obj, act), so a decision
//     is (1 + groups of sub) x (1 + groups of obj) map lookups;
//   - wildcard p rows sit per (sub, act) in buckets keyed by their literal
//     prefix and are tested with casbin's own matching function.
//
// Nothing is written while deciding, so callers who enumerate identifiers
// cannot grow memory, and decisions on many cores do not contend.
type index struct {
	shape    *shape
	rules    []rule             // every loaded rule, file order
	subs     map[string]closure // closure["g" that takes r.sub], or nil
	objs     map[string]closure // closure["g" that takes r.obj], or nil
	graphs   map[string]*graph  // the role definitions the matcher uses, for token groups
	rows     map[rowKey]hit
	patterns map[subAct]*patternSet
	match    func(key1, key2 string) bool
}

// closure is what one name reaches through a role definition: the names
// within maxDepth links that appear in some p row, nearest first.
type closure struct {
	names []string
	near  int // names[:near] are within maxDepth-1 links: what a token's group, one link away, reaches
}

type rowKey struct{ sub, obj, act string }
type subAct struct{ sub, act string }

// hit holds, for one (sub, obj, act), the first allow and first deny row
// (rule index + 1; 0 for none).
type hit struct{ allow, deny int32 }

// patternSet is the wildcard rows of one (sub, act), bucketed by the
// literal text before the pattern's first special character: only buckets
// whose prefix starts the object are tested.
type patternSet struct {
	byPrefix map[string][]int32 // prefix -> rule indexes
	lens     []int              // distinct prefix lengths, ascending
}

// newIndex builds the index of rules (as casbin loaded them) for shape s.
func newIndex(s *shape, rules []rule) *index {
	x := &index{shape: s, rules: rules, rows: map[rowKey]hit{}, patterns: map[subAct]*patternSet{},
		match: matchFuncs[s.objMatch]}
	matters := map[string]bool{}
	var pRules int
	for i, r := range rules {
		if r.ptype != "p" {
			continue
		}
		pRules++
		matters[r.fields[0]], matters[r.fields[1]] = true, true
		x.addRow(int32(i), r.fields)
	}
	if pRules == 0 {
		// With no p row casbin evaluates the matcher once with every p value
		// empty and allows when it holds: a virtual row ("", "", "").
		x.rules = append(slices.Clip(x.rules), rule{ptype: "p", fields: []string{"", "", "", "allow"}, text: "(no p rows: casbin evaluates the matcher once with empty p values)"})
		x.addRow(int32(len(x.rules)-1), x.rules[len(x.rules)-1].fields)
		matters[""] = true
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
	return x
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

func (x *index) addRow(i int32, f []string) {
	eff := x.effect(f)
	if eff == 0 {
		return
	}
	k := rowKey{f[0], f[1], f[2]}
	h := x.rows[k]
	if eff > 0 && h.allow == 0 {
		h.allow = i + 1
	}
	if eff < 0 && h.deny == 0 {
		h.deny = i + 1
	}
	x.rows[k] = h
	if x.match == nil {
		return
	}
	cut := strings.IndexAny(f[1], specials[x.shape.objMatch])
	if cut < 0 {
		return // a literal: the match function is plain equality, the map covers it
	}
	sa := subAct{f[0], f[2]}
	ps := x.patterns[sa]
	if ps == nil {
		ps = &patternSet{byPrefix: map[string][]int32{}}
		x.patterns[sa] = ps
	}
	prefix := f[1][:cut]
	if _, seen := ps.byPrefix[prefix]; !seen {
		ps.lens = append(ps.lens, len(prefix))
		slices.Sort(ps.lens)
		ps.lens = slices.Compact(ps.lens)
	}
	ps.byPrefix[prefix] = append(ps.byPrefix[prefix], i)
}

// enforce is casbin's Enforce(sub, obj, act) for the indexed model, with
// the subject's token groups as g lines.
func (x *index) enforce(q subject, obj, act string) bool {
	allow, _ := x.decide(q, obj, act, nil)
	return allow
}

// reach returns the names name reaches through role definition role (with
// closures cl), with the subject's token groups as links from q.id in
// groupRole: without groups, the closure built at load.
func (x *index) reach(role string, cl map[string]closure, name string, q subject) []string {
	base := cl[name].names
	if len(q.groups) == 0 || role != groupRole {
		return base
	}
	if name == q.id {
		// A group is one link away; what it reaches counts within one
		// link fewer. A shortest path never comes back through q.id.
		out := slices.Clip(base)
		for _, g := range q.groups {
			c := cl[g]
			out = append(append(out, g), c.names[:c.near]...)
		}
		return out
	}
	if g := x.graphs[role]; g != nil && g.hasMembers(q.id) {
		// name reaches q.id (a principal that is itself a group, rare):
		// walk the links with the token's added.
		return g.reachWith(name, q.id, q.groups)
	}
	return base
}

// decide returns the decision and the deciding rule's index (-1 when no
// rule matched). seen, when not nil, is told every matching rule (tools).
func (x *index) decide(q subject, obj, act string, seen func(ruleIdx int, viaSub, viaObj string)) (bool, int) {
	sub := q.id
	if x.shape.guard && strings.IndexByte(sub, ':') >= 0 {
		return false, -1
	}
	allowAt, denyAt := -1, -1
	note := func(idx int32, allow bool, viaSub, viaObj string) {
		if seen != nil {
			seen(int(idx-1), viaSub, viaObj)
		}
		if allow && allowAt < 0 {
			allowAt = int(idx - 1)
		} else if !allow && denyAt < 0 {
			denyAt = int(idx - 1)
		}
	}
	subs, objs := x.reach(x.shape.subRole, x.subs, sub, q), x.reach(x.shape.objRole, x.objs, obj, q)
	for i := -1; i < len(subs); i++ {
		s := sub
		if i >= 0 {
			s = subs[i]
		}
		for j := -1; j < len(objs); j++ {
			o := obj
			if j >= 0 {
				o = objs[j]
			}
			h, ok := x.rows[rowKey{s, o, act}]
			if !ok {
				continue
			}
			if h.deny != 0 {
				note(h.deny, false, s, o)
				if seen == nil {
					return false, denyAt
				}
			}
			if h.allow != 0 {
				note(h.allow, true, s, o)
				if seen == nil && !x.shape.denyWins {
					return true, allowAt
				}
			}
		}
		if ps := x.patterns[subAct{s, act}]; ps != nil {
			for _, n := range ps.lens {
				if n > len(obj) {
					break
				}
				for _, ri := range ps.byPrefix[obj[:n]] {
					r := x.rules[ri]
					if !x.match(obj, r.fields[1]) {
						continue
					}
					allow := x.effect(r.fields) > 0
					note(ri+1, allow, s, r.fields[1])
					if seen == nil && (!allow || !x.shape.denyWins) {
						return allow, int(ri)
					}
				}
			}
		}
	}
	if denyAt >= 0 {
		return false, denyAt
	}
	return allowAt >= 0, allowAt
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
				c.names = append(c.names, g.names[n])
				if depth < maxDepth {
					c.near = len(c.names)
				}
			}
		})
		if c.names != nil {
			c.names = slices.Clip(c.names)
			out[g.names[i]] = c
		}
	}
	return out
}

// buildClosures is graph.closures over links, names only.
func buildClosures(links [][2]string, matters map[string]bool) map[string][]string {
	out := map[string][]string{}
	for name, c := range newGraph(links).closures(matters) {
		out[name] = c.names
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
