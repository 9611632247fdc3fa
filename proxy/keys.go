package proxy

import "strconv"

// This package stores nothing in Redis itself: it names documents for the
// response cache (package cache), which hashes these names into its own
// facade:cache:... keys. Every name starts with a short lowercase kind, so
// ops can scan one kind (see cache/keys.go), and carries everything the
// upstream call depends on, so two requests that would fetch different
// documents never share one.
const (
	// projectsDocKey names the one document with every project and its
	// plans, fetched page by page with plans expanded and shared by all
	// principals (the per-principal filtering happens in process). The
	// version suffix changes if the document's layout ever does.
	projectsDocKey = "projects:all:v1"
)

// resultsDocKey names a page of a plan's results: plan, expansion and
// paging, all already validated (the plan key by parsePlanParam, the rest
// are numbers).
func resultsDocKey(plan planRef, p listParams) string {
	b := make([]byte, 0, 64)
	b = append(b, "results:"...)
	b = append(b, plan.project...)
	b = append(b, '-')
	b = append(b, plan.plan...)
	b = append(b, ":e="...)
	b = strconv.AppendUint(b, uint64(p.expand), 10)
	b = append(b, ":s="...)
	b = strconv.AppendInt(b, int64(p.startIndex), 10)
	b = append(b, ":m="...)
	b = strconv.AppendInt(b, int64(p.maxResults), 10)
	return string(b)
}
