package bambootest

import (
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

func (s *Server) routes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /rest/api/latest/project", s.handleProjects)
	mux.HandleFunc("GET /rest/api/latest/project.json", s.handleProjects)
	mux.HandleFunc("GET /rest/api/latest/result/{key}", s.handleResults)
	// A pattern ending in "/" also matches everything below it: Bamboo
	// serves an artifact's files under its directory URL.
	mux.HandleFunc("GET /browse/{build}/artifact/{job}/{name}/", s.handleArtifact)
	mux.HandleFunc("GET /download/{planJob}/build_logs/{file}", s.handleBuildLog)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, http.StatusNotFound, "null for uri: "+s.base(r)+r.URL.RequestURI())
	})
	return mux
}

// paging reads Bamboo's paging parameters: start-index, and max-results or
// max-result (clients send both). Bad values fall back to the defaults.
type paging struct{ start, max int }

func pagingOf(r *http.Request) paging {
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
	for _, e := range strings.Split(r.URL.Query().Get("expand"), ",") {
		e = strings.TrimSpace(e)
		if e == want || strings.HasPrefix(e, want+".") {
			return true
		}
	}
	return false
}

func (s *Server) handleProjects(w http.ResponseWriter, r *http.Request) {
	base, page := s.base(r), pagingOf(r)
	withPlans := expanded(r, "projects.project.plans")
	s.mu.RLock()
	from, to := page.window(len(s.projects))
	items := make([]any, 0, to-from)
	for _, p := range s.projects[from:to] {
		items = append(items, projectDoc(base, p, withPlans))
	}
	total := len(s.projects)
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

func (s *Server) handleResults(w http.ResponseWriter, r *http.Request) {
	base, page := s.base(r), pagingOf(r)
	planKey := strings.TrimSuffix(r.PathValue("key"), ".json")
	withArtifacts := expanded(r, "results.result.artifacts")
	s.mu.RLock()
	p := s.findPlanLocked(planKey)
	if p == nil {
		s.mu.RUnlock()
		writeError(w, r, http.StatusNotFound, "Plan "+planKey+" not found.")
		return
	}
	from, to := page.window(len(p.results))
	items := make([]any, 0, to-from)
	for _, res := range p.results[from:to] {
		items = append(items, resultDoc(base, res, withArtifacts))
	}
	s.mu.RUnlock()

	writeDoc(w, r, "results", doc{
		"expand": "results",
		"link":   link(base + "/rest/api/latest/result/" + planKey),
		"results": doc{
			"size": len(items), "expand": "result", "start-index": from,
			"max-result": len(items), "result": items,
		},
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
	if rest := strings.Trim(strings.TrimPrefix(r.URL.Path, "/browse/"+r.PathValue("build")+"/artifact/"+job+"/"+name), "/"); rest != "" {
		filename = rest[strings.LastIndex(rest, "/")+1:]
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
