package compiled

import (
	"fmt"
	"slices"
	"strings"
)

// linksOf returns the (member, group) pairs of role definition g.
func linksOf(rules []Rule, g string) [][2]string {
	var links [][2]string
	for _, r := range rules {
		if r.Type == g {
			links = append(links, [2]string{r.Fields[0], r.Fields[1]})
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

// reach calls visit for the names start reaches in 1..MaxDepth links, in
// breadth-first order with the parent and depth of each (for chains), as
// casbin's hasLinkHelper walks level by level.
func (g *graph) reach(start int32, stamp []uint32, gen uint32, visit func(n, parent int32, depth int)) {
	level := []int32{start}
	stamp[start] = gen
	for depth := 1; depth <= MaxDepth && len(level) > 0; depth++ {
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
// MaxDepth that are in matters (the others cannot change a decision).
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
				if depth < MaxDepth {
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

// Closures is graph.closures over links, names only.
func Closures(links [][2]string, matters map[string]bool) map[string][]string {
	out := map[string][]string{}
	for name, c := range newGraph(links).closures(matters) {
		out[name] = c.names()
	}
	return out
}

// reachWith returns every name start reaches within MaxDepth links with
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
	for depth := 1; depth <= MaxDepth && len(level) > 0; depth++ {
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
// (within MaxDepth), or nil. from == to gives [from].
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

// GraphFindings reports cycles and chains longer than casbin follows in
// role definition g.
func GraphFindings(path string, rules []Rule, g string) []Problem {
	byLink := map[[2]string]Rule{}
	var links [][2]string
	for _, r := range rules {
		if r.Type == g && len(r.Fields) == 2 {
			l := [2]string{r.Fields[0], r.Fields[1]}
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
		problems = append(problems, Problem{File: path, Line: byLink[closing].Line, Warning: true,
			Msg: fmt.Sprintf("group cycle: %s", strings.Join(names, " -> "))})
	}
	// A chain deeper than MaxDepth from a name nobody links into.
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
				Msg: fmt.Sprintf("%s reaches %s only through more than %d %s links: casbin stops at %d, so that grant does not apply", gr.names[i], deep, MaxDepth, g, MaxDepth)})
			break
		}
	}
	return problems
}

// cycle returns one cycle of g as the names along it, first and last the
// same (a -> b -> a), or nil. One depth-first walk over every link, so a
// contract-sized policy is checked quickly (docs/performance.md).
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

// beyond returns a name start reaches only past MaxDepth links, or "".
func (g *graph) beyond(start int32, stamp []uint32, gen uint32) string {
	level := []int32{start}
	stamp[start] = gen
	for depth := 1; len(level) > 0; depth++ {
		var next []int32
		for _, n := range level {
			for _, m := range g.out[n] {
				if stamp[m] != gen {
					if depth > MaxDepth {
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
