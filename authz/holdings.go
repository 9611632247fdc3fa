package authz

import (
	"slices"
	"strings"
	"sync"

	facade "github.com/facade-dev/facade"
	"github.com/facade-dev/facade/authz/compiled"
)

// Holdings says whether a principal has anything here of each kind, for
// the page's tabs (GET /auth/me's "has", docs/contract.md §2). It is a
// hint, not a decision: every route still asks its own question.
type Holdings struct {
	Accounts bool `json:"accounts"`
	Classes  bool `json:"classes"`
	Builds   bool `json:"builds"`
	// ClassesNeedRole: the policy grants view on some class, but without
	// the professor role (the token's or a role: line's) the grant takes no
	// effect, so the page says what is missing instead of showing nothing.
	ClassesNeedRole bool `json:"classes_need_role,omitempty"`
}

// Holdings answers from the policy alone, without reading any data: an
// allow row on an account, or on a project or plan, for the principal, one
// of its groups, or a name they reach through g links (as casbin follows
// them, MaxDepth deep); classes for a student (their own grade) or a
// professor who may view some class.
func (a *Authorizer) Holdings(p facade.Principal) Holdings {
	if p.ID == "" {
		return Holdings{}
	}
	st := a.force.state()
	grants := st.grantIndex()
	q := compiled.SubjectOf(p)
	var h Holdings
	grants.walk(append([]string{q.ID}, q.Groups...), func(k kinds) bool {
		h.Accounts = h.Accounts || k&kindAccount != 0
		h.Builds = h.Builds || k&kindBuild != 0
		return h.Accounts && h.Builds
	})
	// Roles as the grade rules read them: the token's or the policy's.
	h.Classes = st.HasRole(p, facade.RoleStudent) ||
		(st.HasRole(p, facade.RoleProfessor) && len(a.Enrollment().ClassesVisibleTo(p)) > 0)
	if !h.Classes && !st.HasRole(p, facade.RoleProfessor) {
		h.ClassesNeedRole = slices.ContainsFunc(st.classIndex().classes, func(c string) bool { return st.enforce(q, c, ActView) })
	}
	return h
}

type kinds uint8

const (
	kindAccount kinds = 1 << iota
	kindBuild
)

// grants is, per p-row subject, the kinds of object its allow rows name,
// and the g links between names: built once per loaded policy, on first
// use (decisions never need it).
type grants struct {
	once  sync.Once
	bySub map[string]kinds
	links map[string][]string
}

func (st *Loaded) grantIndex() *grants {
	g := &st.grants
	g.once.Do(func() {
		g.bySub, g.links = map[string]kinds{}, map[string][]string{}
		for _, r := range st.pol.Rules {
			switch {
			case r.Type == compiled.GroupRole && len(r.Fields) >= 2:
				g.links[r.Fields[0]] = append(g.links[r.Fields[0]], r.Fields[1])
			case r.Type == "p" && len(r.Fields) >= 2 && (len(r.Fields) < 4 || r.Fields[3] != "deny"):
				g.bySub[r.Fields[0]] |= kindOf(r.Fields[1])
			}
		}
	})
	return g
}

func kindOf(obj string) kinds {
	switch {
	case strings.HasPrefix(obj, PrefixAccount):
		return kindAccount
	case strings.HasPrefix(obj, PrefixProject), strings.HasPrefix(obj, PrefixPlan):
		return kindBuild
	}
	return 0
}

// walk calls seen with the kinds granted to each name reachable from
// starts (breadth first, MaxDepth links) until seen answers true.
func (g *grants) walk(starts []string, seen func(kinds) bool) {
	visited := map[string]bool{}
	level := starts
	for depth := 0; depth <= compiled.MaxDepth && len(level) > 0; depth++ {
		var next []string
		for _, n := range level {
			if visited[n] {
				continue
			}
			visited[n] = true
			if seen(g.bySub[n]) {
				return
			}
			next = append(next, g.links[n]...)
		}
		level = next
	}
}
