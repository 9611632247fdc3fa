package authz

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/casbin/casbin/v2/model"

	facade "github.com/facade-dev/facade"
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
	pt := m["p"]["p"].Tokens
	standard := slices.Equal(pt, []string{"p_sub", "p_obj", "p_act"}) || slices.Equal(pt, []string{"p_sub", "p_obj", "p_act", "p_eft"})
	guarded := strings.Contains(strings.Join(strings.Fields(defValue(m, "m", "m")), ""), `!regexMatch(r_sub,":")`)
	members := map[string]bool{}
	for _, r := range rules {
		if strings.HasPrefix(r.ptype, "g") && len(r.fields) >= 2 {
			members[r.fields[1]] = true
		}
	}
	problems = append(problems, unreachableGroups(path, m, rules, members)...)
	problems = append(problems, misspelledRoles(path, m, rules)...)
	words := vocabularyOf(m)
	for _, r := range rules {
		if r.ptype != "p" || !standard {
			continue
		}
		sub, obj, act := r.fields[0], r.fields[1], r.fields[2]
		actNamed := words.names("act", act)
		if !isAction(act) && !actNamed {
			add(r, false, "unknown action %q%s: the service asks for %s", act, suggest(act), strings.Join(actions, ", "))
			continue
		}
		if kind, ok := objectKind(obj); !ok && !words.names("obj", obj) {
			add(r, false, "unknown object %q: expected class:ID, account:ID, project:KEY, plan:KEY-PLAN or student:ID (or a wildcard such as project:WEB*)", obj)
			continue
		} else if kind != "" && !actNamed && !actionFits(kind, act) {
			add(r, true, "action %q is never asked about %s objects: this line can never matter", act, kind)
		}
		// group:NAME gets its members from tokens, not from g lines.
		if guarded && strings.Contains(sub, ":") && !members[sub] && !strings.HasPrefix(sub, prefixGroup) {
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

// unreachableGroups warns of group:NAME subjects no principal can ever be
// in: NAME is no name a token or sign-in can carry (facade.ValidGroupName:
// empty, over 256 characters, a control character) and no g line gives
// the group members. casbin loads such a line; it never matters. (A valid
// NAME gets its members from tokens, however it is spelled: acme:payments,
// "Domain Users".)
func unreachableGroups(path string, m model.Model, rules []rule, members map[string]bool) []Problem {
	if _, ok := m["g"][groupRole]; !ok {
		return nil // no g: token groups go nowhere, and lint's other findings say so
	}
	var problems []Problem
	warned := map[string]bool{}
	for _, r := range rules {
		var subjects []string
		switch {
		case r.ptype == "p" && len(r.fields) >= 1:
			subjects = r.fields[:1]
		case r.ptype == groupRole && len(r.fields) == 2:
			subjects = r.fields[:1] // the group a line puts into another
		}
		for _, sub := range subjects {
			name, ok := strings.CutPrefix(sub, prefixGroup)
			if !ok || facade.ValidGroupName(name) || members[sub] || warned[sub] {
				continue
			}
			warned[sub] = true
			problems = append(problems, Problem{File: path, Line: r.line, Warning: true,
				Msg: fmt.Sprintf("%q is no group a token can carry (%s) and no g line gives it members: this line can never matter", sub, whyNotGroupName(name))})
		}
	}
	return problems
}

// misspelledRoles warns of a g line giving a role a letter or two away
// from one with grade rules (role:profesor): a role is any string, so
// casbin and the service accept it, and it gives nothing.
func misspelledRoles(path string, m model.Model, rules []rule) []Problem {
	if _, ok := m["g"][groupRole]; !ok {
		return nil
	}
	var problems []Problem
	known := []string{facade.RoleProfessor, facade.RoleStudent}
	for _, r := range rules {
		if r.ptype != groupRole || len(r.fields) != 2 {
			continue
		}
		role, ok := strings.CutPrefix(r.fields[1], prefixRole)
		if !ok || slices.Contains(known, role) {
			continue
		}
		if hint := suggestOf(role, known); hint != "" {
			problems = append(problems, Problem{File: path, Line: r.line, Warning: true,
				Msg: fmt.Sprintf("role %q%s: only roles professor and student carry grade rules", role, hint)})
		}
	}
	return problems
}

// whyNotGroupName says why name is not facade.ValidGroupName, in words.
func whyNotGroupName(name string) string {
	switch {
	case name == "":
		return "the name after group: is empty"
	case !utf8.ValidString(name):
		return "the name is not valid UTF-8"
	case utf8.RuneCountInString(name) > facade.MaxGroupNameLen:
		return fmt.Sprintf("the name has %d characters; a group name has at most %d", utf8.RuneCountInString(name), facade.MaxGroupNameLen)
	}
	for i, r := range name {
		if !unicode.IsGraphic(r) {
			return fmt.Sprintf("the name has the unprintable character %U at byte %d", r, i)
		}
	}
	return "not a group name"
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

// actions are the actions the service asks about.
var actions = []string{actView, actUpdate, actViewAccount, actTransfer, actReceive}

func isAction(act string) bool { return slices.Contains(actions, act) }

// suggest names the action act is most likely a typo of, if any is within
// two edits.
func suggest(act string) string { return suggestOf(act, actions) }

// suggestOf names the one of among that act is most likely a typo of.
func suggestOf(act string, among []string) string {
	best, dist := "", 3
	for _, a := range among {
		if d := editDistance(act, a); d < dist {
			best, dist = a, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// editDistance is Levenshtein's distance between a and b, counting an
// adjacent swap as one edit ("veiw" is one from "view").
func editDistance(a, b string) int {
	prev2, prev, cur := make([]int, len(b)+1), make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
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
