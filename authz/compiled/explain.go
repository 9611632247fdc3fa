package compiled

import (
	"fmt"
	"slices"
	"strings"
)

// Explanation says why a question was decided as it was.
type Explanation struct {
	Allow bool
	Rule  string   // the deciding policy line, "file:line: text"; empty when nothing matched
	Chain []string // the g lines that took sub (then obj) to the deciding line's sub and obj
	Notes []string // built-in rules, or what was searched
}

// Explain says why p answers casbin's question (q.ID, obj, act), with q's
// token groups, as it does: the deciding line, the g lines that led to it,
// and notes. It is the question alone, without the service's own rules
// (package policytool adds those).
func (p *Policy) Explain(q Subject, obj, act string) Explanation {
	switch d := p.d.(type) {
	case *index:
		return p.explainIndex(d, q, obj, act)
	case *casbinDecider:
		allow, row, err := d.explain(q, obj, act)
		x := Explanation{Allow: allow && err == nil}
		if err != nil {
			x.Notes = append(x.Notes, "casbin could not evaluate the question: deny")
		}
		if len(row) > 0 {
			x.Rule = p.cite(row)
		}
		x.Notes = append(x.Notes, "decided by casbin's Enforce (the model is not one the index decides): no chain of g links is shown")
		return x
	}
	return Explanation{}
}

func (p *Policy) explainIndex(x *index, q Subject, obj, act string) Explanation {
	sub := q.ID
	if g := x.shape.guard; g != nil && g.MatchString(sub) {
		return Explanation{Notes: []string{fmt.Sprintf("%q matches the matcher's !regexMatch(r.sub, %q): it names a group or an object, never a principal", sub, x.shape.guardSrc)}}
	}
	type via struct{ sub, obj string }
	vias := map[int]via{}
	allow, at := x.decide(q, obj, act, func(i int, s, o string) {
		if _, ok := vias[i]; !ok {
			vias[i] = via{s, o}
		}
	})
	viaSub, viaObj := vias[at].sub, vias[at].obj
	e := Explanation{Allow: allow}
	if at < 0 {
		e.Notes = append(e.Notes, p.searched(x, q, obj, act))
		return e
	}
	r := x.rules[at]
	e.Rule = r.Cite(p.Path)
	e.Chain = append(p.Chain(q, x.shape.subRole, sub, viaSub), p.Chain(q, x.shape.objRole, obj, viaObj)...)
	if viaObj != obj && !slices.Contains(x.reach(x.shape.objRole, x.objs, obj, q), viaObj) {
		e.Notes = append(e.Notes, fmt.Sprintf("%s matches the wildcard %s (%s)", obj, viaObj, x.shape.objMatch))
	}
	if !allow {
		e.Notes = append(e.Notes, "a deny rule matched: deny wins over any allow")
	}
	return e
}

// Chain cites the g lines of role definition g from -> ... -> to, with
// q's token groups: when the policy's own lines do not lead from q.ID to
// to, the chain starts at the group that does.
func (p *Policy) Chain(q Subject, g, from, to string) []string {
	if g == "" || from == to {
		return nil
	}
	if lines := p.chain(g, from, to); lines != nil || g != GroupRole || from != q.ID {
		return lines
	}
	for _, grp := range q.Groups {
		token := fmt.Sprintf("(token groups) %s is a member of %s", q.ID, grp)
		if grp == to {
			return []string{token}
		}
		if lines := p.chain(g, grp, to); lines != nil {
			return append([]string{token}, lines...)
		}
	}
	return nil
}

// chain cites the g lines from -> ... -> to in role definition g.
func (p *Policy) chain(g, from, to string) []string {
	if g == "" || from == to {
		return nil
	}
	links := linksOf(p.Rules, g)
	names := newGraph(links).chain(from, to)
	var lines []string
	for i := 1; i < len(names); i++ {
		for _, r := range p.Rules {
			if r.Type == g && r.Fields[0] == names[i-1] && r.Fields[1] == names[i] {
				lines = append(lines, r.Cite(p.Path))
				break
			}
		}
	}
	return lines
}

// cite finds the policy line of a p row casbin returned.
func (p *Policy) cite(row []string) string {
	if i := p.ruleOf(row); i >= 0 {
		return p.Rules[i].Cite(p.Path)
	}
	return "p, " + strings.Join(row, ", ")
}

// ruleOf is the index of the p rule with fields row, or -1.
func (p *Policy) ruleOf(row []string) int {
	for i, r := range p.Rules {
		if r.Type == "p" && slices.Equal(r.Fields, row) {
			return i
		}
	}
	return -1
}

func (p *Policy) searched(x *index, q Subject, obj, act string) string {
	who := q.ID
	if gs := x.reach(x.shape.subRole, x.subs, q.ID, q); len(gs) > 0 {
		who += " or its groups (" + strings.Join(gs, ", ") + ")"
	}
	what := obj
	if os := x.reach(x.shape.objRole, x.objs, obj, q); len(os) > 0 {
		what += " or its groups (" + strings.Join(os, ", ") + ")"
	}
	return fmt.Sprintf("no policy line grants %s on %s to %s", act, what, who)
}

// Lines formats an explanation for people: the deciding rule, the chain,
// then notes prefixed "# ".
func (x Explanation) Lines() []string {
	var lines []string
	lines = append(lines, x.Chain...)
	if x.Rule != "" {
		lines = append(lines, x.Rule)
	}
	for _, n := range x.Notes {
		lines = append(lines, "# "+n)
	}
	return lines
}

// names returns every name the policy mentions as a p subject or in g
