package authz

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Grant is one row of the access review (`facade policy report`): Subject
// may do Action on Object, by the policy lines in GrantedBy.
type Grant struct {
	Subject string `json:"subject"`
	Kind    string `json:"kind"`   // principal, group, or anyone (a line the matcher matches for every subject)
	Object  string `json:"object"` // an object, or a wildcard as the line writes it
	Action  string `json:"action"` // an action, or a literal the matcher names ("*")
	// GrantedBy cites each p line that grants it ("file:line: text"),
	// directly or through the subject's groups and the object's groups.
	GrantedBy []string `json:"granted_by"`
	// Except cites the deny lines that take part of a wildcard grant back
	// (objects it covers, or patterns that may overlap it).
	Except []string `json:"except,omitempty"`
	// LastUsed is the latest use of a line in GrantedBy (by anyone the
	// line grants), when the report was made with usage (AttachUsage).
	LastUsed *time.Time `json:"last_used"`
}

// maxReportQuestions bounds a report on a model casbin decides, which asks
// every subject x object x action.
const maxReportQuestions = 20_000_000

// Report lists every subject (principal or group) x object x action the
// files grant, sorted, for one subject when subject is not empty. A group
// is reported as its members get it. On a model the index decides, each
// grant line is expanded backwards through the role graphs (who reaches
// its subject, what reaches its object, within casbin's 10 links), so the
// cost follows the size of the answer; on another model every question
// over the names the policy mentions is asked of casbin.
func (p *Policy) Report(subject string) ([]Grant, error) {
	var grants []Grant
	var err error
	if x, ok := p.st.decider.(*index); ok {
		grants = p.reportIndex(x, subject)
	} else if grants, err = p.reportCasbin(subject); err != nil {
		return nil, err
	}
	slices.SortFunc(grants, func(a, b Grant) int {
		return cmp.Or(cmp.Compare(a.Subject, b.Subject), cmp.Compare(a.Object, b.Object), cmp.Compare(a.Action, b.Action))
	})
	return grants, nil
}

type grantKey struct{ sub, obj, act string }

func (p *Policy) reportIndex(x *index, only string) []Grant {
	s := x.shape
	// Groups are reported as their members get them: without the guard
	// that keeps a token's sub from posing as one.
	unguarded, noGuard := *x, *s
	noGuard.guard = nil
	unguarded.shape = &noGuard
	subsOf := backwards(x, s.subRole)
	objsOf := backwards(x, s.objRole)
	found := map[grantKey][]int{}
	for i, r := range x.rules {
		if r.ptype != "p" || x.effect(r.fields) <= 0 || r.line == 0 {
			continue
		}
		var subs []string
		if slices.Contains(s.subLits, r.fields[0]) {
			subs = []string{anyone}
		}
		if s.subEq || s.subRole != "" {
			subs = append(subs, subsOf(r.fields[0])...)
		}
		objs := []string{r.fields[1]}
		if s.objRole != "" {
			objs = objsOf(r.fields[1])
		}
		for _, sub := range subs {
			if only != "" && sub != only {
				continue
			}
			for _, obj := range objs {
				k := grantKey{sub, obj, r.fields[2]}
				found[k] = append(found[k], i)
			}
		}
	}
	cites := map[int]string{} // rows cite the same few lines many times
	cite := func(i int) string {
		c, ok := cites[i]
		if !ok {
			c = x.rules[i].cite(p.policyPath)
			cites[i] = c
		}
		return c
	}
	grants := make([]Grant, 0, len(found))
	keys := map[int]string{}
	for k, rows := range found {
		g := Grant{Subject: k.sub, Kind: p.kindOf(x, k.sub), Object: k.obj, Action: k.act}
		if s.denyWins && k.sub != anyone {
			if x.isWildcard(k.obj) {
				g.Except = p.exceptions(x, k, rows)
			} else if allow, _ := unguarded.decide(subject{id: k.sub}, k.obj, k.act, nil); !allow {
				continue // a deny line takes it back
			}
		}
		g.GrantedBy = make([]string, len(rows))
		for j, i := range rows {
			g.GrantedBy[j] = cite(i)
		}
		g.LastUsed = p.lastUsed(rows, keys)
		grants = append(grants, g)
	}
	return grants
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
// and every name that reaches it within maxDepth links (memoized).
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
func (p *Policy) kindOf(x *index, sub string) string {
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
func (p *Policy) exceptions(x *index, k grantKey, rows []int) []string {
	var wild []objPattern
	for _, i := range rows {
		if x.compiled != nil && !x.compiled[i].literal {
			wild = append(wild, x.compiled[i])
		}
	}
	if len(wild) == 0 {
		return nil
	}
	subs := append([]string{k.sub}, x.reach(x.shape.subRole, x.subs, k.sub, subject{id: k.sub})...)
	var out []string
	for _, r := range x.rules {
		if r.ptype != "p" || x.effect(r.fields) >= 0 || r.fields[2] != k.act || !slices.Contains(subs, r.fields[0]) {
			continue
		}
		dp, err := compilePattern(x.shape.objMatch, r.fields[1])
		covered := err != nil || !dp.literal
		for _, w := range wild {
			covered = covered || w.match(r.fields[1])
		}
		if covered {
			out = append(out, r.cite(p.policyPath))
		}
	}
	return out
}

// reportCasbin asks casbin every question over the names the policy
// mentions (a group as its members get it); the granting line is the one
// casbin's EnforceEx names.
func (p *Policy) reportCasbin(only string) ([]Grant, error) {
	subjects, objects, actions := p.names()
	if only != "" {
		subjects = []string{only}
	}
	if n := len(subjects) * len(objects) * len(actions); n > maxReportQuestions {
		return nil, fmt.Errorf("authz: %d questions to ask casbin (over %d): the model is not one the index decides", n, maxReportQuestions)
	}
	d := p.st.decider.(*casbinDecider)
	var grants []Grant
	keys := map[int]string{}
	for _, s := range subjects {
		kind := "principal"
		if strings.Contains(s, ":") {
			kind = "group"
		}
		for _, o := range objects {
			for _, a := range actions {
				allow, row, err := d.explain(subject{id: s}, o, a)
				if err != nil || !allow {
					continue
				}
				g := Grant{Subject: s, Kind: kind, Object: o, Action: a}
				if len(row) > 0 {
					g.GrantedBy = []string{p.cite(row)}
					g.LastUsed = p.lastUsed([]int{p.ruleOf(row)}, keys)
				}
				grants = append(grants, g)
			}
		}
	}
	return grants, nil
}
