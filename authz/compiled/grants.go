package compiled

import (
	"slices"
	"strings"
)

// Grant is one (subject, object, action) the policy grants, with the
// lines that grant it.
type Grant struct {
	Subject string
	Kind    string // principal, group, or anyone (a line the matcher matches for every subject)
	Object  string // an object, or a wildcard as the line writes it
	Action  string // an action, or a literal the matcher names ("*")
	// GrantedBy cites each p line that grants it ("file:line: text"),
	// directly or through the subject's groups and the object's groups;
	// Rules are those lines' indexes in Policy.Rules.
	GrantedBy []string
	Rules     []int
	// Except cites the deny lines that take part of a wildcard grant back
	// (objects it covers, or patterns that may overlap it).
	Except []string
}

type grantKey struct{ sub, obj, act string }

// Grants lists every subject (principal or group) x object x action the
// index grants, unsorted, for one subject when only is not "". A group is
// listed as its members get it. Each grant line is expanded backwards
// through the role graphs (who reaches its subject, what reaches its
// object, within casbin's MaxDepth links), so the cost follows the size of
// the answer. ok is false when casbin decides: its answers are found only
// by asking each question (Explain).
func (p *Policy) Grants(only string) (grants []Grant, ok bool) {
	x, ok := p.d.(*index)
	if !ok {
		return nil, false
	}
	s := x.shape
	// Groups are listed as their members get them: without the guard
	// that keeps a token's sub from posing as one.
	unguarded := x.unguarded()
	subsOf := backwards(x, s.subRole)
	objsOf := backwards(x, s.objRole)
	found := map[grantKey][]int{}
	for i, r := range x.rules {
		if r.Type != "p" || x.effect(r.Fields) <= 0 || r.Line == 0 {
			continue
		}
		var subs []string
		if slices.Contains(s.subLits, r.Fields[0]) {
			subs = []string{anyone}
		}
		if s.subEq || s.subRole != "" {
			subs = append(subs, subsOf(r.Fields[0])...)
		}
		objs := []string{r.Fields[1]}
		if s.objRole != "" {
			objs = objsOf(r.Fields[1])
		}
		for _, sub := range subs {
			if only != "" && sub != only {
				continue
			}
			for _, obj := range objs {
				k := grantKey{sub, obj, r.Fields[2]}
				found[k] = append(found[k], i)
			}
		}
	}
	cites := map[int]string{} // rows cite the same few lines many times
	cite := func(i int) string {
		c, ok := cites[i]
		if !ok {
			c = x.rules[i].Cite(p.Path)
			cites[i] = c
		}
		return c
	}
	grants = make([]Grant, 0, len(found))
	for k, rows := range found {
		g := Grant{Subject: k.sub, Kind: x.kindOf(k.sub), Object: k.obj, Action: k.act, Rules: rows}
		if s.denyWins && k.sub != anyone {
			if x.isWildcard(k.obj) {
				g.Except = x.exceptions(k, rows, p.Path)
			} else if allow, _ := unguarded.decide(Subject{ID: k.sub}, k.obj, k.act, nil); !allow {
				continue // a deny line takes it back
			}
		}
		g.GrantedBy = make([]string, len(rows))
		for j, i := range rows {
			g.GrantedBy[j] = cite(i)
		}
		grants = append(grants, g)
	}
	return grants, true
}

// isWildcard reports whether obj, as a p line's object, matches more than
// one object under the model's matching function.
func (x *index) isWildcard(obj string) bool {
	if x.shape.objMatch == "" {
		return false
	}
	p, err := compilePattern(x.shape.objMatch, obj)
	return err != nil || !p.literal
}

// anyone is the subject of a line the matcher matches for every subject
// (p.sub == "LITERAL").
const anyone = "*"

// backwards returns, for role definition role, a function listing a name
// and every name that reaches it within MaxDepth links (memoized).
func backwards(x *index, role string) func(string) []string {
	if role == "" {
		return func(n string) []string { return []string{n} }
	}
	g := x.graphs[role]
	rev := make([][]int32, len(g.names))
	for from, outs := range g.out {
		for _, to := range outs {
			rev[to] = append(rev[to], int32(from))
		}
	}
	back := &graph{id: g.id, names: g.names, out: rev}
	stamp := make([]uint32, len(g.names))
	gen := uint32(0)
	memo := map[string][]string{}
	return func(n string) []string {
		if r, ok := memo[n]; ok {
			return r
		}
		out := []string{n}
		if i, ok := back.id[n]; ok {
			gen++
			back.reach(i, stamp, gen, func(m, _ int32, _ int) { out = append(out, back.names[m]) })
		}
		memo[n] = out
		return out
	}
}

// kindOf says whether a report subject is a principal (a token's sub) or
// a group.
func (x *index) kindOf(sub string) string {
	switch {
	case sub == anyone:
		return "anyone"
	case strings.Contains(sub, ":") || x.graphs[x.shape.subRole] != nil && x.graphs[x.shape.subRole].hasMembers(sub):
		return "group"
	}
	return "principal"
}

// exceptions cites the deny lines that match the subject (or a group it
// reaches) and the action, on objects the granted wildcard covers (or on
// patterns, which may overlap it). A literal grant has none: it stands or
// was dropped.
func (x *index) exceptions(k grantKey, rows []int, path string) []string {
	var wild []objPattern
	for _, i := range rows {
		if x.compiled != nil && !x.compiled[i].literal {
			wild = append(wild, x.compiled[i])
		}
	}
	if len(wild) == 0 {
		return nil
	}
	subs := append([]string{k.sub}, x.reach(x.shape.subRole, x.subs, k.sub, Subject{ID: k.sub})...)
	var out []string
	for _, r := range x.rules {
		if r.Type != "p" || x.effect(r.Fields) >= 0 || r.Fields[2] != k.act || !slices.Contains(subs, r.Fields[0]) {
			continue
		}
		dp, err := compilePattern(x.shape.objMatch, r.Fields[1])
		covered := err != nil || !dp.literal
		for _, w := range wild {
			covered = covered || w.match(r.Fields[1])
		}
		if covered {
			out = append(out, r.Cite(path))
		}
	}
	return out
}

// IsWildcard reports whether obj, written as a p line's object, matches
// more than one object under the model's matching function (false when
// casbin decides).
func (p *Policy) IsWildcard(obj string) bool {
	x, ok := p.d.(*index)
	return ok && x.isWildcard(obj)
}
