package bambootest

import (
	"fmt"
	"html"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// Artifacts and build logs, and the HTML page Bamboo answers a directory
// link with.

// handleArtifact serves /browse/{PROJ-PLAN-N}/artifact/{JOB|shared}/{name}/...
func (s *handlers) handleArtifact(w http.ResponseWriter, r *http.Request) {
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
func (s *handlers) handleBuildLog(w http.ResponseWriter, r *http.Request) {
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
func (s *handlers) listingPage(w http.ResponseWriter, r *http.Request, a Artifact) {
	w.Header().Set("Content-Type", "text/html;charset=UTF-8")
	dir := s.base(r) + r.URL.EscapedPath()
	_, _ = fmt.Fprintf(w, `<!DOCTYPE html><html><head><title>Artifact %s - Atlassian Bamboo</title></head>
<body><ul><li><a href="%s%s">%s</a></li></ul><footer>Powered by Atlassian Bamboo version %s</footer></body></html>
`, html.EscapeString(a.Name), html.EscapeString(dir), html.EscapeString(url.PathEscape(a.Name)), html.EscapeString(a.Name), Version)
}
