package compiled

import (
	"fmt"
	"slices"
)

// MaxDepth is how many g links casbin's default role manager follows from a
// name (NewRoleManagerImpl(10) in every casbin v2 enforcer). A longer chain
// grants nothing in casbin, so it grants nothing here; policy check warns.
const MaxDepth = 10

// index decides a recognized model (model.go) without scanning p rows:
//
//   - every name that has g links gets its closure, precomputed at load:
//     the names it reaches within MaxDepth links that appear in some p row
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
	rules    []Rule             // every loaded rule, file order
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
// within MaxDepth links that appear in some p row, nearest first.
type closure struct {
	reach []reached
	near  int32 // reach[:near] are within maxDepth-1 links: what a token's group, one link away, reaches
	// base numbers the (name, reach[j]) pairs for the flusher's books
	// (count.go): pair j is base+j.
	base int32
}

// reached is one name a closure reaches, with the decisions that went
// from the closure's name to it (count.go). The count sits beside the
// name the decision has just read into its candidates, so counting a
// pair touches no other memory: a separate array of every pair's counter
// cost an allow a cache miss (BenchmarkDecide's usage-cost,
// docs/performance.md).
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
func newIndex(s *shape, rules []Rule) (*index, error) {
	x := &index{shape: s, rules: rules, rows: map[rowKey]hit{}, keyed: map[rowKey]hit{}, patterns: map[subAct]*patternSet{}}
	matters := map[string]bool{}
	var pRules int
	for _, r := range rules {
		if r.Type == "p" {
			pRules++
		}
	}
	if pRules == 0 {
		// With no p row casbin evaluates the matcher once with every p value
		// empty and allows when it holds: a virtual row ("", "", "").
		x.rules = append(slices.Clip(x.rules), Rule{Type: "p", Fields: []string{"", "", "", "allow"}, Text: "(no p rows: casbin evaluates the matcher once with empty p values)"})
	}
	if s.objMatch != "" {
		x.compiled = make([]objPattern, len(x.rules))
	}
	for i, r := range x.rules {
		if r.Type != "p" {
			continue
		}
		matters[r.Fields[0]], matters[r.Fields[1]] = true, true
		if err := x.addRow(int32(i), r.Fields); err != nil {
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
func (x *index) enforce(q Subject, obj, act string) bool {
	return x.enforceUsed(q, obj, act, nil)
}

// enforceUsed is enforce, counting the lines the decision used in u (nil:
// none). enforce is this with nil, so both run the same code and differ
// by the count alone.
func (x *index) enforceUsed(q Subject, obj, act string, u *Uses) bool {
	d := x.run(q, obj, act, nil)
	if u != nil {
		x.credit(u, q, obj, &d)
	}
	allow, _ := d.result()
	return allow
}

func (x *index) kind() string { return DeciderIndex }

// unguarded is x without the matcher's guard (Policy.Unguarded).
func (x *index) unguarded() *index {
	s := *x.shape
	s.guard = nil
	y := *x
	y.shape = &s
	return &y
}
