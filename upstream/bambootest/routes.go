package bambootest

import (
	"fmt"
	"html"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

func (s *Server) routes() *http.ServeMux {
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

func (s *Server) pagingOf(r *http.Request) paging {
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

func (s *Server) handleProjects(w http.ResponseWriter, r *http.Request) {
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
func (s *Server) handleProject(w http.ResponseWriter, r *http.Request) {
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
func (s *Server) handlePlans(w http.ResponseWriter, r *http.Request) {
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
func (s *Server) planFor(w http.ResponseWriter, r *http.Request, key string) *plan {
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

func (s *Server) handlePlan(w http.ResponseWriter, r *http.Request) {
	key := strings.TrimSuffix(r.PathValue("key"), ".json")
	s.mu.RLock()
	defer s.mu.RUnlock()
	if p := s.planFor(w, r, key); p != nil {
		writeDoc(w, r, "plan", fullPlanDoc(s.base(r), p, expandUnder(r, "")))
	}
}

// handleBranches serves /plan/{key}/branch: the plan's branches, paged.
func (s *Server) handleBranches(w http.ResponseWriter, r *http.Request) {
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

// resultFilter holds Bamboo's result-list filters as a request gave them.
type resultFilter struct {
	labels, issues       []string
	state                string
	allStates, continues bool
	favourite, clover    bool
}

func filterOf(r *http.Request) resultFilter {
	q := r.URL.Query()
	list := func(name string) []string {
		var out []string
		for _, v := range q[name] {
			for _, item := range strings.Split(v, ",") {
				if item = strings.TrimSpace(item); item != "" {
					out = append(out, item)
				}
			}
		}
		return out
	}
	// Bamboo documents its boolean filters bare (?favourite&cloverEnabled)
	// and reads "true" as true.
	flag := func(name string) bool {
		return q.Has(name) && (q.Get(name) == "" || strings.EqualFold(q.Get(name), "true"))
	}
	return resultFilter{
		labels: list("label"), issues: list("issueKey"), state: q.Get("buildstate"),
		allStates: flag("includeAllStates"), continues: flag("continuable"),
		favourite: flag("favourite"), clover: flag("cloverEnabled"),
	}
}

// matches applies the filters that concern one result.
func (f resultFilter) matches(res *result) bool {
	switch {
	case !f.allStates && res.lifeCycle != lifeCycleFinished:
		return false
	case f.state != "" && !strings.EqualFold(f.state, res.state):
		return false
	case f.continues && !res.continuable:
		return false
	case len(f.labels) > 0 && !slices.ContainsFunc(f.labels, func(l string) bool { return slices.Contains(res.labels, l) }):
		return false
	case len(f.issues) > 0 && !slices.ContainsFunc(f.issues, func(i string) bool { return slices.Contains(res.issues, i) }):
		return false
	}
	return true
}

// planMatches applies the filters that concern a plan (on /result lists).
func (f resultFilter) planMatches(p *plan) bool {
	return !p.hidden && (!f.favourite || p.favourite) && (!f.clover || p.clover)
}

func (s *Server) writeResults(w http.ResponseWriter, r *http.Request, self string, results []*result, from int) {
	base := s.base(r)
	ex := expandUnder(r, "results.result.")
	items := make([]any, 0, len(results))
	for _, res := range results {
		items = append(items, resultDoc(base, res, ex))
	}
	writeDoc(w, r, "results", doc{
		"expand": "results",
		"link":   link(base + "/rest/api/latest/result" + self),
		"results": doc{
			"size": len(items), "expand": "result", "start-index": from,
			"max-result": len(items), "result": items,
		},
	})
}

// latestOf is, per plan, the newest result passing f (nil when none).
func latestOf(plans []*plan, f resultFilter) []*result {
	var out []*result
	for _, p := range plans {
		if !f.planMatches(p) {
			continue
		}
		if i := slices.IndexFunc(p.results, f.matches); i >= 0 {
			out = append(out, p.results[i])
		}
	}
	return out
}

// handleLatestResults serves /result: the latest result of every plan.
func (s *Server) handleLatestResults(w http.ResponseWriter, r *http.Request) {
	page := s.pagingOf(r)
	s.mu.RLock()
	defer s.mu.RUnlock()
	var plans []*plan
	for _, p := range s.projects {
		plans = append(plans, p.plans...)
	}
	all := latestOf(plans, filterOf(r))
	from, to := page.window(len(all))
	s.writeResults(w, r, "", all[from:to], from)
}

// handleResultKey serves /result/{key}: a project's latest results (K), a
// plan's results (K-P), one result (K-P-N) or one job result (K-P-J-N).
func (s *Server) handleResultKey(w http.ResponseWriter, r *http.Request) {
	key := strings.TrimSuffix(r.PathValue("key"), ".json")
	parts := strings.Split(key, "-")
	s.mu.RLock()
	defer s.mu.RUnlock()
	last := parts[len(parts)-1]
	_, numErr := strconv.Atoi(last)
	switch {
	case len(parts) == 1:
		s.projectResults(w, r, key)
	case len(parts) == 2:
		s.planResults(w, r, key)
	case len(parts) == 3 && (numErr == nil || last == "latest"):
		s.oneResult(w, r, parts[0]+"-"+parts[1], last)
	case len(parts) == 4 && numErr == nil:
		s.jobResult(w, r, parts[0]+"-"+parts[1], parts[2], last)
	default:
		writeError(w, r, http.StatusNotFound, "Result "+key+" not found.")
	}
}

// handleResultSub serves /result/K-P/{N|latest} and /result/K-P-N/{label|comment}.
func (s *Server) handleResultSub(w http.ResponseWriter, r *http.Request) {
	key, sub := r.PathValue("key"), strings.TrimSuffix(r.PathValue("sub"), ".json")
	s.mu.RLock()
	defer s.mu.RUnlock()
	switch sub {
	case "label", "comment":
		s.resultLists(w, r, key, sub)
	default:
		s.oneResult(w, r, key, sub)
	}
}

func (s *Server) projectResults(w http.ResponseWriter, r *http.Request, key string) {
	i := slices.IndexFunc(s.projects, func(p *project) bool { return p.key == key })
	if i < 0 {
		writeError(w, r, http.StatusNotFound, "Project "+key+" not found.")
		return
	}
	page := s.pagingOf(r)
	all := latestOf(s.projects[i].plans, filterOf(r))
	from, to := page.window(len(all))
	s.writeResults(w, r, "/"+key, all[from:to], from)
}

func (s *Server) planResults(w http.ResponseWriter, r *http.Request, key string) {
	p := s.planFor(w, r, key)
	if p == nil {
		return
	}
	f := filterOf(r)
	var all []*result
	for _, res := range p.results {
		if f.matches(res) {
			all = append(all, res)
		}
	}
	from, to := s.pagingOf(r).window(len(all))
	s.writeResults(w, r, "/"+key, all[from:to], from)
}

// resultOf finds build number (or "latest") of plan key, answering the
// error itself when there is none.
func (s *Server) resultOf(w http.ResponseWriter, r *http.Request, planKey, number string) *result {
	p := s.planFor(w, r, planKey)
	if p == nil {
		return nil
	}
	var res *result
	if number == "latest" {
		res = p.latest()
	} else if n, err := strconv.Atoi(number); err == nil {
		if i := slices.IndexFunc(p.results, func(x *result) bool { return x.number == n }); i >= 0 {
			res = p.results[i]
		}
	}
	if res == nil {
		writeError(w, r, http.StatusNotFound, "Result "+planKey+"-"+number+" not found.")
	}
	return res
}

func (s *Server) oneResult(w http.ResponseWriter, r *http.Request, planKey, number string) {
	if res := s.resultOf(w, r, planKey, number); res != nil {
		writeDoc(w, r, "result", resultDoc(s.base(r), res, expandUnder(r, "")))
	}
}

func (s *Server) jobResult(w http.ResponseWriter, r *http.Request, planKey, job, number string) {
	res := s.resultOf(w, r, planKey, number)
	if res == nil {
		return
	}
	if !slices.Contains(res.jobs(), job) {
		writeError(w, r, http.StatusNotFound, "Result "+planKey+"-"+job+"-"+number+" not found.")
		return
	}
	writeDoc(w, r, "result", jobResultDoc(s.base(r), res, job, expandUnder(r, "")))
}

// resultLists serves a result's labels or comments.
func (s *Server) resultLists(w http.ResponseWriter, r *http.Request, key, what string) {
	cut := strings.LastIndex(key, "-")
	if cut < 0 {
		writeError(w, r, http.StatusNotFound, "Result "+key+" not found.")
		return
	}
	res := s.resultOf(w, r, key[:cut], key[cut+1:])
	if res == nil {
		return
	}
	values, member := res.labels, "name"
	if what == "comment" {
		values, member = res.comments, "content"
	}
	d := namedList(what, values, member, true)
	writeDoc(w, r, what+"s", doc{
		"expand":   what + "s",
		"link":     link(s.base(r) + "/rest/api/latest/result/" + key + "/" + what),
		what + "s": d,
	})
}

// handleArtifact serves /browse/{PROJ-PLAN-N}/artifact/{JOB|shared}/{name}/...
func (s *Server) handleArtifact(w http.ResponseWriter, r *http.Request) {
	job, name := r.PathValue("job"), r.PathValue("name")
	s.mu.RLock()
	res := s.findResultLocked(r.PathValue("build"))
	var found *Artifact
	if res != nil {
		i := slices.IndexFunc(res.artifacts, func(a Artifact) bool {
			return !a.isBuildLog() && a.urlName() == name &&
				(a.ProducerJobKey == job || (a.Shared && job == "shared"))
		})
		if i >= 0 {
			found = &res.artifacts[i]
		}
	}
	s.mu.RUnlock()
	if found == nil {
		writeError(w, r, http.StatusNotFound, "Artifact not found.")
		return
	}
	filename := found.Name
	rest := strings.Trim(strings.TrimPrefix(r.URL.Path, "/browse/"+r.PathValue("build")+"/artifact/"+job+"/"+name), "/")
	if rest != "" {
		filename = rest[strings.LastIndex(rest, "/")+1:]
	}
	if found.Directory && rest == "" {
		s.listingPage(w, r, *found)
		return
	}
	serveFile(w, r, *found, res, filename)
}

// handleBuildLog serves /download/{PROJ-PLAN-JOB}/build_logs/{PROJ-PLAN-JOB-N}.log.
func (s *Server) handleBuildLog(w http.ResponseWriter, r *http.Request) {
	planJob, file := r.PathValue("planJob"), r.PathValue("file")
	number, numberOK := strings.CutPrefix(strings.TrimSuffix(file, ".log"), planJob+"-")
	cut := strings.LastIndex(planJob, "-")
	s.mu.RLock()
	var res *result
	if numberOK && cut > 0 && strings.HasSuffix(file, ".log") {
		res = s.findResultLocked(planJob[:cut] + "-" + number)
	}
	var found *Artifact
	if res != nil {
		i := slices.IndexFunc(res.artifacts, func(a Artifact) bool {
			return a.isBuildLog() && a.ProducerJobKey == planJob[cut+1:]
		})
		if i >= 0 {
			found = &res.artifacts[i]
		}
	}
	s.mu.RUnlock()
	if found == nil {
		writeError(w, r, http.StatusNotFound, "Build log not found.")
		return
	}
	serveFile(w, r, *found, res, file)
}

// serveFile streams the artifact with Content-Type, Content-Length,
// Content-Disposition and Range support, reading it as it is sent.
func serveFile(w http.ResponseWriter, r *http.Request, a Artifact, res *result, filename string) {
	w.Header().Set("Content-Type", a.contentType())
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": filename}))
	http.ServeContent(w, r, filename, res.completed(), a.open(res))
}

// listingPage is Bamboo's HTML page for an artifact directory: links to
// the files on the server's own host, and its version in the footer.
func (s *Server) listingPage(w http.ResponseWriter, r *http.Request, a Artifact) {
	w.Header().Set("Content-Type", "text/html;charset=UTF-8")
	dir := s.base(r) + r.URL.EscapedPath()
	_, _ = fmt.Fprintf(w, `<!DOCTYPE html><html><head><title>Artifact %s - Atlassian Bamboo</title></head>
<body><ul><li><a href="%s%s">%s</a></li></ul><footer>Powered by Atlassian Bamboo version %s</footer></body></html>
`, html.EscapeString(a.Name), html.EscapeString(dir), html.EscapeString(url.PathEscape(a.Name)), html.EscapeString(a.Name), Version)
}
