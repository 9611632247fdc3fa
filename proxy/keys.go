package proxy

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
	// cloverProjectsDocKey is the same list as Bamboo answers it with
	// cloverEnabled=true (?cloverEnabled on the project and plan lists).
	cloverProjectsDocKey = "projects:clover:v1"
)

// Every other document is named by docKey (serve.go): "doc:", the route,
// the upstream path and the upstream query, all built from validated
// parts.
