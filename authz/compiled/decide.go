package compiled

// reach returns the names name reaches through role definition role (with
// closures cl), with the subject's token groups as links from q.ID in
// GroupRole: without groups, the closure built at load.
func (x *index) reach(role string, cl map[string]closure, name string, q Subject) []string {
	c, more, _ := x.reachFrom(role, cl, name, q)
	return append(c.names(), more...)
}

// reachFrom is reach in two parts: name's own closure (whose pairs number
// the first len(c.reach) names reached) and the names reached beyond it
// through the token's groups. walked: name reaches q.ID (a principal that
// is itself a group, rare), the names were walked with the token's links
// and are all in more (c is empty).
func (x *index) reachFrom(role string, cl map[string]closure, name string, q Subject) (c closure, more []string, walked bool) {
	if role == "" {
		return closure{}, nil, false
	}
	c = cl[name]
	if len(q.Groups) == 0 || role != GroupRole {
		return c, nil, false
	}
	if name == q.ID {
		// A group is one link away; what it reaches counts within one
		// link fewer. A shortest path never comes back through q.ID.
		for _, g := range q.Groups {
			more = append(more, g)
			for _, r := range cl[g].reach[:cl[g].near] {
				more = append(more, r.name)
			}
		}
		return c, more, false
	}
	if g := x.graphs[role]; g != nil && g.hasMembers(q.ID) {
		return closure{}, g.reachWith(name, q.ID, q.Groups), true
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
func (x *index) decide(q Subject, obj, act string, seen func(ruleIdx int, viaSub, viaObj string)) (bool, int) {
	d := x.run(q, obj, act, seen)
	return d.result()
}

// run is decide, returning the whole decision: where in the candidate
// lists the allowing row was found, for usage (count.go).
func (x *index) run(q Subject, obj, act string, seen func(ruleIdx int, viaSub, viaObj string)) decision {
	s := x.shape
	d := decision{allowAt: -1, denyAt: -1, seen: seen, denyWins: s.denyWins}
	if s.guard != nil && s.guard.MatchString(q.ID) {
		return d
	}
	// Candidate lists live on the stack: a principal in a few dozen groups
	// (20 teams and their parents in the contract-sized benchmark) fits,
	// and a list grown on the heap on every decision cost the p99 through
	// garbage collection (docs/performance.md).
	var sb, ob, ab [64]string
	var more []string
	d.subs.cl, more, d.subs.walked = x.reachFrom(s.subRole, x.subs, q.ID, q)
	d.subs.self = s.subEq || s.subRole != ""
	subs := candidates(sb[:0], q.ID, d.subs.self, d.subs.cl, more, s.subLits)
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
			if d.hit(hit{}.add(ri, x.effect(x.rules[ri].Fields)), sub, x.rules[ri].Fields[1], si, -1) {
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
