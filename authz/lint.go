package authz

import (
	"fmt"
	"slices"
	"strings"

	"github.com/casbin/casbin/v2/model"
)

// lint reports what casbin accepts but ops want to hear about: actions and
// objects the service never asks about (typos: refused), grants to groups
// nobody is in, group cycles, chains longer than casbin follows, effects
// casbin ignores (the graph findings only when graphs is set: they are
// warnings, for `policy check`). Vocabulary checks apply to models whose p rows are
// sub, obj, act[, eft]; other models only get the graph findings.
func lint(path string, m model.Model, rules []rule, graphs bool) []Problem {
	var problems []Problem
	add := func(r rule, warning bool, format string, args ...any) {
		problems = append(problems, Problem{File: path, Line: r.line, Warning: warning, Msg: fmt.Sprintf(format, args...)})
	}
	standard := squash(defValue(m, "p", "p")) == "sub,obj,act" || squash(defValue(m, "p", "p")) == "sub,obj,act,eft"
	guarded := strings.Contains(squash(defValue(m, "m", "m")), `!regexMatch(r_sub,":")`)
	members := map[string]bool{}
	for _, r := range rules {
		if strings.HasPrefix(r.ptype, "g") && len(r.fields) >= 2 {
			members[r.fields[1]] = true
		}
	}
	for _, r := range rules {
		if r.ptype != "p" || !standard {
			continue
		}
		sub, obj, act := r.fields[0], r.fields[1], r.fields[2]
		if !isAction(act) {
			add(r, false, "unknown action %q: the service asks for view, update, view_account or transfer", act)
			continue
		}
		if kind, ok := objectKind(obj); !ok {
			add(r, false, "unknown object %q: expected class:ID, account:ID, project:KEY, plan:KEY-PLAN or student:ID (or a wildcard such as project:WEB*)", obj)
			continue
		} else if kind != "" && !actionFits(kind, act) {
			add(r, true, "action %q is never asked about %s objects: this line can never matter", act, kind)
		}
		if guarded && strings.Contains(sub, ":") && !members[sub] {
			add(r, true, "grant to group %q, which nobody is in: this line can never matter", sub)
		}
		if len(r.fields) == 4 && r.fields[3] != "allow" && r.fields[3] != "deny" {
			add(r, true, "eft %q is neither allow nor deny: casbin ignores this line", r.fields[3])
		}
	}
	if !graphs {
		return problems
	}
	for g := range m["g"] {
		problems = append(problems, graphFindings(path, rules, g)...)
	}
	return problems
}

// graphFindings reports cycles and chains longer than casbin follows in
// role definition g.
func graphFindings(path string, rules []rule, g string) []Problem {
	byLink := map[[2]string]rule{}
	var links [][2]string
	for _, r := range rules {
		if r.ptype == g && len(r.fields) == 2 {
			l := [2]string{r.fields[0], r.fields[1]}
			links = append(links, l)
			byLink[l] = r
		}
	}
	if len(links) == 0 {
		return nil
	}
	gr := newGraph(links)
	var problems []Problem
	// A cycle (one is enough to act on; the others usually share it),
	// reported at the line of the link that closes it.
	if cycle := gr.cycle(); cycle != nil {
		names := make([]string, len(cycle))
		for i, n := range cycle {
			names[i] = gr.names[n]
		}
		closing := [2]string{names[len(names)-2], names[len(names)-1]}
		problems = append(problems, Problem{File: path, Line: byLink[closing].line, Warning: true,
			Msg: fmt.Sprintf("group cycle: %s", strings.Join(names, " -> "))})
	}
	// A chain deeper than maxDepth from a name nobody links into.
	into := map[int32]bool{}
	for _, outs := range gr.out {
		for _, n := range outs {
			into[n] = true
		}
	}
	stamp := make([]uint32, len(gr.names))
	for i := range gr.names {
		if into[int32(i)] || len(gr.out[i]) == 0 {
			continue
		}
		if deep := gr.beyond(int32(i), stamp, uint32(i+1)); deep != "" {
			problems = append(problems, Problem{File: path, Warning: true,
				Msg: fmt.Sprintf("%s reaches %s only through more than %d %s links: casbin stops at %d, so that grant does not apply", gr.names[i], deep, maxDepth, g, maxDepth)})
			break
		}
	}
	return problems
}

// cycle returns one cycle of g as the names along it, first and last the
// same (a -> b -> a), or nil. One depth-first walk over every link: a
// policy of 100,000 enrollments is checked in milliseconds.
func (g *graph) cycle() []int32 {
	const (
		unseen = iota
		onPath
		done
	)
	state := make([]uint8, len(g.names))
	type frame struct{ n, next int32 }
	for root := range g.names {
		if state[root] != unseen {
			continue
		}
		path := []frame{{int32(root), 0}}
		state[root] = onPath
		for len(path) > 0 {
			top := &path[len(path)-1]
			if int(top.next) == len(g.out[top.n]) {
				state[top.n] = done
				path = path[:len(path)-1]
				continue
			}
			m := g.out[top.n][top.next]
			top.next++
			switch state[m] {
			case unseen:
				state[m] = onPath
				path = append(path, frame{m, 0})
			case onPath: // a link back into the path: the path from m closes a cycle
				var cycle []int32
				for i := len(path) - 1; i >= 0; i-- {
					cycle = append(cycle, path[i].n)
					if path[i].n == m {
						break
					}
				}
				slices.Reverse(cycle)
				return append(cycle, m)
			}
		}
	}
	return nil
}

// beyond returns a name start reaches only past maxDepth links, or "".
func (g *graph) beyond(start int32, stamp []uint32, gen uint32) string {
	level := []int32{start}
	stamp[start] = gen
	for depth := 1; len(level) > 0; depth++ {
		var next []int32
		for _, n := range level {
			for _, m := range g.out[n] {
				if stamp[m] != gen {
					if depth > maxDepth {
						return g.names[m]
					}
					stamp[m] = gen
					next = append(next, m)
				}
			}
		}
		level = next
	}
	return ""
}

func isAction(act string) bool {
	switch act {
	case actView, actUpdate, actViewAccount, actTransfer, actReceive:
		return true
	}
	return false
}

// objectKind returns the object's prefix ("" for a wildcard that names
// none, like "*"), and whether the object is one the service can ask about.
func objectKind(obj string) (string, bool) {
	for _, p := range []string{prefixClass, prefixAccount, prefixProject, prefixPlan, prefixStudent} {
		if strings.HasPrefix(obj, p) {
			return p, true
		}
	}
	if strings.ContainsAny(obj, "*?[{") {
		return "", true
	}
	return "", false
}

func actionFits(kind, act string) bool {
	for _, a := range actionsFor[kind] {
		if a == act {
			return true
		}
	}
	return false
}
