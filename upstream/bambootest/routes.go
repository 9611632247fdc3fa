package bambootest

import (
	"net/http"
	"strconv"
	"strings"
)

func (s *handlers) routes() *http.ServeMux {
	mux := http.NewServeMux()
	const api = "GET /rest/api/latest"
	mux.HandleFunc(api+"/project", s.handleProjects)
	mux.HandleFunc(api+"/project.json", s.handleProjects)
	mux.HandleFunc(api+"/project/{key}", s.handleProject)
	mux.HandleFunc(api+"/plan", s.handlePlans)
	mux.HandleFunc(api+"/plan.json", s.handlePlans)
	mux.HandleFunc(api+"/plan/{key}", s.handlePlan)
	mux.HandleFunc(api+"/plan/{key}/{sub}", s.handleBranches)
	mux.HandleFunc(api+"/result", s.handleLatestResults)
	mux.HandleFunc(api+"/result.json", s.handleLatestResults)
	mux.HandleFunc(api+"/result/{key}", s.handleResultKey)
	mux.HandleFunc(api+"/result/{key}/{sub}", s.handleResultSub)
	// A pattern ending in "/" also matches everything below it: Bamboo
	// serves an artifact's files under its directory URL.
	mux.HandleFunc("GET /browse/{build}/artifact/{job}/{name}/", s.handleArtifact)
	// The directory link without its slash: Bamboo redirects to the
	// directory URL.
	mux.HandleFunc("GET /browse/{build}/artifact/{job}/{name}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.EscapedPath()+"/", http.StatusFound)
	})
	mux.HandleFunc("GET /download/{planJob}/build_logs/{file}", s.handleBuildLog)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, http.StatusNotFound, "null for uri: "+s.base(r)+r.URL.RequestURI())
	})
	return mux
}

// paging reads Bamboo's paging parameters: start-index, and max-results or
// max-result (clients send both). Bad values fall back to the defaults; a
// page above the server's cap (WithPageCap) is cut to it.
type paging struct{ start, max int }

func (s *handlers) pagingOf(r *http.Request) paging {
	p := requestedPaging(r)
	if s.pageCap > 0 {
		p.max = min(p.max, s.pageCap)
	}
	return p
}

func requestedPaging(r *http.Request) paging {
	q := r.URL.Query()
	p := paging{start: 0, max: 25}
	if n, err := strconv.Atoi(q.Get("start-index")); err == nil && n >= 0 {
		p.start = n
	}
	for _, name := range []string{"max-results", "max-result"} {
		if n, err := strconv.Atoi(q.Get(name)); err == nil && n >= 0 {
			p.max = n
			break
		}
	}
	return p
}

// window returns the bounds of the page within total items.
func (p paging) window(total int) (from, to int) {
	from = min(p.start, total)
	return from, min(from+p.max, total)
}

// expanded reports whether the expand parameter names want, or something
// deeper under it ("projects.project.plans.plan" expands the plans too).
func expanded(r *http.Request, want string) bool {
	return expandUnder(r, "").has(want)
}

// expandUnder returns the expand paths under prefix ("results.result."),
// with the prefix removed: what one object of a list was asked to expand.
func expandUnder(r *http.Request, prefix string) expansion {
	ex := expansion{}
	for _, e := range strings.Split(r.URL.Query().Get("expand"), ",") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(e), prefix); ok && rest != "" {
			ex[rest] = true
		}
	}
	return ex
}

func (s *handlers) handleProjects(w http.ResponseWriter, r *http.Request) {
	base, page := s.base(r), s.pagingOf(r)
	withPlans := expanded(r, "projects.project.plans")
	f := filterOf(r)
	s.mu.RLock()
	// cloverEnabled (and the service account's favourite) keep the
	// projects with a matching plan, and those plans.
	projects := s.projects
	if f.clover || f.favourite {
		projects = nil
		for _, p := range s.projects {
			kept := &project{key: p.key, name: p.name, description: p.description}
			for _, pl := range p.plans {
				if f.planMatches(pl) {
					kept.plans = append(kept.plans, pl)
				}
			}
			if len(kept.plans) > 0 {
				projects = append(projects, kept)
			}
		}
	}
	from, to := page.window(len(projects))
	items := make([]any, 0, to-from)
	for _, p := range projects[from:to] {
		items = append(items, projectDoc(base, p, withPlans))
	}
	total := len(projects)
	s.mu.RUnlock()

	writeDoc(w, r, "projects", doc{
		"expand": "projects",
		"link":   link(base + "/rest/api/latest/project"),
		"projects": doc{
			"size": total, "expand": "project", "start-index": from,
			"max-result": len(items), "project": items,
		},
	})
}

// handleProject serves /project/{key}: one project, plans with expand=plans.
func (s *handlers) handleProject(w http.ResponseWriter, r *http.Request) {
	key := strings.TrimSuffix(r.PathValue("key"), ".json")
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, p := range s.projects {
		if p.key == key {
			writeDoc(w, r, "project", projectDoc(s.base(r), p, expanded(r, "plans")))
			return
		}
	}
	writeError(w, r, http.StatusNotFound, "Project "+key+" not found")
}

// handlePlans serves /plan: every plan the account may see, paged.
func (s *handlers) handlePlans(w http.ResponseWriter, r *http.Request) {
	base, page := s.base(r), s.pagingOf(r)
	s.mu.RLock()
	var all []*plan
	for _, p := range s.projects {
		all = append(all, visiblePlans(p)...)
	}
	from, to := page.window(len(all))
	items := make([]any, 0, to-from)
	for _, p := range all[from:to] {
		items = append(items, fullPlanDoc(base, p, nil))
	}
	s.mu.RUnlock()
	writeDoc(w, r, "plans", doc{
		"expand": "plans",
		"link":   link(base + "/rest/api/latest/plan"),
		"plans": doc{
			"size": len(all), "expand": "plan", "start-index": from,
			"max-result": len(items), "plan": items,
		},
	})
}

// planFor looks a plan up for a request, answering 404 (absent) or 403
// (hidden from the account) itself when it cannot be served. The caller
// holds s.mu.
func (s *handlers) planFor(w http.ResponseWriter, r *http.Request, key string) *plan {
	p := s.findPlanLocked(key)
	switch {
	case p == nil:
		writeError(w, r, http.StatusNotFound, "Plan "+key+" not found.")
	case p.hidden || (p.master != nil && p.master.hidden):
		writeError(w, r, http.StatusForbidden, "You are not authorised to view plan "+key+".")
	default:
		return p
	}
	return nil
}

func (s *handlers) handlePlan(w http.ResponseWriter, r *http.Request) {
	key := strings.TrimSuffix(r.PathValue("key"), ".json")
	s.mu.RLock()
	defer s.mu.RUnlock()
	if p := s.planFor(w, r, key); p != nil {
		writeDoc(w, r, "plan", fullPlanDoc(s.base(r), p, expandUnder(r, "")))
	}
}

// handleBranches serves /plan/{key}/branch: the plan's branches, paged.
func (s *handlers) handleBranches(w http.ResponseWriter, r *http.Request) {
	if sub := r.PathValue("sub"); sub != "branch" && sub != "branch.json" {
		writeError(w, r, http.StatusNotFound, "null for uri: "+s.base(r)+r.URL.RequestURI())
		return
	}
	key, base, page := r.PathValue("key"), s.base(r), s.pagingOf(r)
	s.mu.RLock()
	defer s.mu.RUnlock()
	p := s.planFor(w, r, key)
	if p == nil {
		return
	}
	branches := visibleBranches(p)
	from, to := page.window(len(branches))
	items := make([]any, 0, to-from)
	for _, b := range branches[from:to] {
		items = append(items, branchDoc(base, b))
	}
	writeDoc(w, r, "branches", doc{
		"expand": "branches",
		"link":   link(base + "/rest/api/latest/plan/" + key + "/branch"),
		"branches": doc{
			"size": len(branches), "expand": "branch", "start-index": from,
			"max-result": len(items), "branch": items,
		},
	})
}
