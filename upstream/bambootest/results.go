package bambootest

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// The result routes: lists of results with Bamboo's filters, one result,
// a job result, a result's labels and comments.

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

func (s *handlers) writeResults(w http.ResponseWriter, r *http.Request, self string, results []*result, from int) {
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
func (s *handlers) handleLatestResults(w http.ResponseWriter, r *http.Request) {
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
func (s *handlers) handleResultKey(w http.ResponseWriter, r *http.Request) {
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
func (s *handlers) handleResultSub(w http.ResponseWriter, r *http.Request) {
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

func (s *handlers) projectResults(w http.ResponseWriter, r *http.Request, key string) {
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

func (s *handlers) planResults(w http.ResponseWriter, r *http.Request, key string) {
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
func (s *handlers) resultOf(w http.ResponseWriter, r *http.Request, planKey, number string) *result {
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

func (s *handlers) oneResult(w http.ResponseWriter, r *http.Request, planKey, number string) {
	if res := s.resultOf(w, r, planKey, number); res != nil {
		writeDoc(w, r, "result", resultDoc(s.base(r), res, expandUnder(r, "")))
	}
}

func (s *handlers) jobResult(w http.ResponseWriter, r *http.Request, planKey, job, number string) {
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
func (s *handlers) resultLists(w http.ResponseWriter, r *http.Request, key, what string) {
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
