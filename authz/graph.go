package authz

import (
	"errors"
	"sync"
	"sync/atomic"

	"github.com/casbin/casbin/v2/log"
	"github.com/casbin/casbin/v2/rbac"
)

// graph is the casbin role manager (rbac.RoleManager) behind g and g2.
//
// It exists because casbin's default role manager is the wrong shape for a
// large, read-mostly policy: HasLink takes one global mutex, creates (and
// then deletes) temporary roles for unknown names, and expands whole BFS
// levels, so a member of a team holding 10,000 grants walks all 10,000 on
// every decision. Here:
//
//   - a direct link is one map lookup (edges);
//   - a walk only follows links into nodes that have links of their own
//     (hubs): principals and groups, never the permission nodes that grants
//     point at, so its cost is the number of groups a principal is in;
//   - asking about an unknown name allocates nothing that outlives the call,
//     so callers that enumerate identifiers cannot grow the heap.
//
// One graph is built per policy load, then frozen: from then on it is only
// read, without locks, and the rbac.RoleManager mutators return errFrozen.
// Before that the lock keeps the mutators and readers correct.
// The zero value is not usable; call newGraph.
type graph struct {
	frozen atomic.Bool
	mu     sync.RWMutex
	out    map[string][]string // name1 -> its direct name2s, in insertion order
	edges  map[link]struct{}
	hubs   map[string][]string // out[n] restricted to nodes that have out links; nil when stale
}

type link struct{ from, to string }

var (
	errDomains = errors.New("authz: role domains are not supported")
	errFrozen  = errors.New("authz: a loaded policy is immutable; edit policy.csv and reload")
)

var _ rbac.RoleManager = (*graph)(nil)

func newGraph() *graph {
	return &graph{out: map[string][]string{}, edges: map[link]struct{}{}}
}

// Clear removes every link.
func (g *graph) Clear() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.frozen.Load() {
		return errFrozen
	}
	g.out, g.edges, g.hubs = map[string][]string{}, map[link]struct{}{}, nil
	return nil
}

// AddLink records name1 -> name2 (name1 inherits name2). Duplicates are ignored.
func (g *graph) AddLink(name1, name2 string, domain ...string) error {
	if len(domain) > 0 {
		return errDomains
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.frozen.Load() {
		return errFrozen
	}
	l := link{name1, name2}
	if _, dup := g.edges[l]; dup {
		return nil
	}
	g.edges[l] = struct{}{}
	g.out[name1] = append(g.out[name1], name2)
	g.hubs = nil
	return nil
}

// BuildRelationship is AddLink (deprecated in the interface).
func (g *graph) BuildRelationship(name1, name2 string, domain ...string) error {
	return g.AddLink(name1, name2, domain...)
}

// DeleteLink removes name1 -> name2.
func (g *graph) DeleteLink(name1, name2 string, domain ...string) error {
	if len(domain) > 0 {
		return errDomains
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.frozen.Load() {
		return errFrozen
	}
	l := link{name1, name2}
	if _, ok := g.edges[l]; !ok {
		return nil
	}
	delete(g.edges, l)
	kept := g.out[name1][:0:0]
	for _, n := range g.out[name1] {
		if n != name2 {
			kept = append(kept, n)
		}
	}
	if len(kept) == 0 {
		delete(g.out, name1)
	} else {
		g.out[name1] = kept
	}
	g.hubs = nil
	return nil
}

// freeze computes hubs and makes the graph read-only; the loader calls it
// before the policy serves a decision.
func (g *graph) freeze() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.computeHubs()
	g.frozen.Store(true)
}

func (g *graph) computeHubs() {
	if g.hubs != nil {
		return
	}
	hubs := make(map[string][]string)
	for from, tos := range g.out {
		for _, to := range tos {
			if _, isHub := g.out[to]; isHub {
				hubs[from] = append(hubs[from], to)
			}
		}
	}
	g.hubs = hubs
}

// rlock makes the graph safe to read until runlock: once frozen nothing
// changes any more and no lock is taken (decisions on many cores do not
// contend); before that it takes the read lock. Use as
// defer g.runlock(g.rlock()).
func (g *graph) rlock() (locked bool) {
	if g.frozen.Load() {
		return false
	}
	g.mu.RLock()
	return true
}

func (g *graph) runlock(locked bool) {
	if locked {
		g.mu.RUnlock()
	}
}

// HasLink reports whether name1 reaches name2 through any number of links
// (or is name2). Cycles are harmless.
func (g *graph) HasLink(name1, name2 string, domain ...string) (bool, error) {
	if len(domain) > 0 {
		return false, errDomains
	}
	return g.reaches(name1, name2), nil
}

// reaches is HasLink without the interface's error.
func (g *graph) reaches(name1, name2 string) bool {
	_, ok := g.reachAny(name1, []string{name2})
	return ok
}

// reachAny walks from start and reports the first target (by index) that
// start is or links to, directly or through hubs. One walk answers "may P do
// this on any of these objects", e.g. "on any class the student is in".
func (g *graph) reachAny(start string, targets []string) (int, bool) {
	for i, t := range targets {
		if t == start {
			return i, true
		}
	}
	defer g.runlock(g.rlock())
	if _, ok := g.out[start]; !ok {
		return 0, false // unknown names cost one lookup and no allocation
	}
	var seenSmall [8]string
	seen, stack := seenSmall[:0], []string{start}
	var seenBig map[string]struct{}
	visit := func(n string) bool { // true the first time n is seen
		if seenBig != nil {
			if _, dup := seenBig[n]; dup {
				return false
			}
			seenBig[n] = struct{}{}
			return true
		}
		for _, s := range seen {
			if s == n {
				return false
			}
		}
		if seen = append(seen, n); len(seen) > len(seenSmall) {
			seenBig = make(map[string]struct{}, 2*len(seen))
			for _, s := range seen {
				seenBig[s] = struct{}{}
			}
		}
		return true
	}
	visit(start)
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for i, t := range targets {
			if _, ok := g.edges[link{n, t}]; ok {
				return i, true
			}
		}
		for _, h := range g.hubsOf(n) {
			if visit(h) {
				stack = append(stack, h)
			}
		}
	}
	return 0, false
}

// hubsOf returns the hubs n links to; call it between rlock and runlock.
func (g *graph) hubsOf(n string) []string {
	if g.hubs != nil {
		return g.hubs[n]
	}
	var hs []string // not frozen and changed since hubs were computed: work it out here
	for _, to := range g.out[n] {
		if _, ok := g.out[to]; ok {
			hs = append(hs, to)
		}
	}
	return hs
}

// path returns the shortest chain start, ..., target of links (start first),
// or nil when start does not reach target. It is for explanations only.
func (g *graph) path(start, target string) []string {
	defer g.runlock(g.rlock())
	parent := map[string]string{start: ""}
	queue := []string{start}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		if _, ok := g.edges[link{n, target}]; ok {
			chain := []string{target}
			for at := n; at != ""; at = parent[at] {
				chain = append(chain, at)
			}
			for i, j := 0, len(chain)-1; i < j; i, j = i+1, j-1 {
				chain[i], chain[j] = chain[j], chain[i]
			}
			return chain
		}
		for _, h := range g.hubsOf(n) {
			if _, seen := parent[h]; !seen {
				parent[h] = n
				queue = append(queue, h)
			}
		}
	}
	return nil
}

// direct returns name's direct links without copying; callers must not
// modify the result. Used for enrollments: student:S -> its classes.
func (g *graph) direct(name string) []string {
	defer g.runlock(g.rlock())
	return g.out[name]
}

// has reports whether name has links of its own.
func (g *graph) has(name string) bool {
	defer g.runlock(g.rlock())
	_, ok := g.out[name]
	return ok
}

// GetRoles returns the names name links to directly.
func (g *graph) GetRoles(name string, domain ...string) ([]string, error) {
	if len(domain) > 0 {
		return nil, errDomains
	}
	return append([]string(nil), g.direct(name)...), nil
}

// GetImplicitRoles returns every name reachable from name.
func (g *graph) GetImplicitRoles(name string, domain ...string) ([]string, error) {
	if len(domain) > 0 {
		return nil, errDomains
	}
	defer g.runlock(g.rlock())
	return walk(name, func(n string) []string { return g.out[n] }), nil
}

// GetUsers returns the names that link to name directly (a full scan: only
// for tools, never on a request path).
func (g *graph) GetUsers(name string, domain ...string) ([]string, error) {
	if len(domain) > 0 {
		return nil, errDomains
	}
	defer g.runlock(g.rlock())
	return g.usersLocked(name), nil
}

func (g *graph) usersLocked(name string) []string {
	var users []string
	for from, tos := range g.out {
		for _, to := range tos {
			if to == name {
				users = append(users, from)
			}
		}
	}
	return users
}

// GetImplicitUsers returns every name that reaches name (full scans).
func (g *graph) GetImplicitUsers(name string, domain ...string) ([]string, error) {
	if len(domain) > 0 {
		return nil, errDomains
	}
	defer g.runlock(g.rlock())
	return walk(name, g.usersLocked), nil
}

// walk returns the names reachable from start via next, start excluded.
func walk(start string, next func(string) []string) []string {
	seen := map[string]bool{start: true}
	var found []string
	for queue := []string{start}; len(queue) > 0; queue = queue[1:] {
		for _, n := range next(queue[0]) {
			if !seen[n] {
				seen[n] = true
				found = append(found, n)
				queue = append(queue, n)
			}
		}
	}
	return found
}

// GetDomains returns no domains: this model has none.
func (g *graph) GetDomains(string) ([]string, error) { return nil, nil }

// GetAllDomains returns no domains: this model has none.
func (g *graph) GetAllDomains() ([]string, error) { return nil, nil }

// DeleteDomain is unsupported: this model has no domains.
func (g *graph) DeleteDomain(string) error { return errDomains }

// PrintRoles does nothing: a 100,000-link graph does not belong in a log.
func (g *graph) PrintRoles() error { return nil }

// SetLogger is a no-op; the graph logs nothing.
func (g *graph) SetLogger(log.Logger) {}

// Match is plain equality: patterns in names are not supported, so a name
// like "team:*" is just a name.
func (g *graph) Match(str, pattern string) bool { return str == pattern }

// AddMatchingFunc is ignored: see Match.
func (g *graph) AddMatchingFunc(string, rbac.MatchingFunc) {}

// AddDomainMatchingFunc is ignored: see Match.
func (g *graph) AddDomainMatchingFunc(string, rbac.MatchingFunc) {}

// links returns the number of links.
func (g *graph) links() int {
	defer g.runlock(g.rlock())
	return len(g.edges)
}
