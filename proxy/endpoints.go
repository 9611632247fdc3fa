package proxy

import (
	"net/http"
	"slices"
	"strings"
)

// The build routes as plain net/http handlers. This package knows no HTTP
// framework: a router mounts each Endpoint's Pattern (net/http's ServeMux
// takes it as it is; server/routes.go turns it into Echo's syntax) with
// the handler Handler returns. A handler reads its path parameters itself,
// from the request's escaped path at the segments its Pattern names, so
// every router hands it the same bytes (an encoded character stays
// encoded, and so outside every key's allowed set).
//
// Errors leave through the ErrorWriter given with each handler: this
// package writes no error body of its own (the server's one error path,
// server/problem, does).

// Endpoint is one path the build routes answer.
type Endpoint struct {
	// Pattern is the path in net/http's ServeMux syntax (see Route.Paths).
	Pattern string
	// Routes are the entries served on the path, told apart by the shape
	// of the key.
	Routes []*Route
	// File: the answer is an artifact or log streamed as an attachment,
	// whatever the request's Accept, not a JSON document.
	File bool
	// Write: the path takes POST and DELETE (a favourite), not GET.
	Write bool
}

// ErrorWriter answers a request with err: a *facade.Error (or one wrapping
// a cause, for the log). It is called at most once per request, and
// before anything of the answer was written, except when the answer fails
// after it started (the client went away, a download broke off): the
// response is then cut short and the writer can only log.
type ErrorWriter func(w http.ResponseWriter, r *http.Request, err error)

// Endpoints lists every path of Routes in table order, each once, with the
// routes served on it, and after each path that ends in a fixed word its
// ".json" twin (/plan.json, /result/{key}/label.json), which Bamboo's
// clients send; a path ending in a key takes ".json" on the key instead.
func Endpoints() []Endpoint {
	var out []Endpoint
	at := map[string]int{}
	add := func(pattern string, rt *Route) {
		if i, ok := at[pattern]; ok {
			out[i].Routes = append(out[i].Routes, rt)
			return
		}
		at[pattern] = len(out)
		out = append(out, Endpoint{Pattern: pattern, Routes: []*Route{rt}, File: rt.View == ViewFile, Write: rt.View == ViewFavourite})
	}
	for i := range Routes {
		rt := &Routes[i]
		for _, p := range rt.Paths {
			add(p, rt)
			if rt.View != ViewFile && rt.View != ViewFavourite && !strings.HasSuffix(p, "}") {
				add(p+".json", rt)
			}
		}
	}
	return out
}

// Handler returns the net/http handler of ep; errors go to fail. The order
// of work is the same for every route: key and query validated (400),
// permission decided (403), and only then the cache or the upstream.
func (h *Handler) Handler(ep Endpoint, fail ErrorWriter) http.Handler {
	key, number := segmentOf(ep.Pattern, "{key}"), segmentOf(ep.Pattern, "{number}")
	routes := slices.Clone(ep.Routes)
	keyParam := keyParamName(routes, number >= 0)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var err error
		if ep.File {
			err = h.artifact(w, r)
		} else {
			err = h.serveKey(w, r, routes, keyParam, pathSegment(r.URL.EscapedPath(), key), pathSegment(r.URL.EscapedPath(), number))
		}
		if err != nil {
			fail(w, r, err)
		}
	})
}

// serveKey serves the route whose key kind the path's key fits; when none
// does, the refusal names the build number if that alone is wrong, else
// the key (as keyParam).
func (h *Handler) serveKey(w http.ResponseWriter, r *http.Request, routes []*Route, keyParam, key, number string) error {
	for _, rt := range routes {
		if k, ok := parseKey(rt.Key, key, number); ok {
			return h.serve(w, r, rt, k)
		}
	}
	if number != "" {
		if _, ok := parseKey(KeyPlan, key, ""); ok {
			return badIdentifier("buildNumber")
		}
	}
	return badIdentifier(keyParam)
}

// keyParamName is the name api/openapi.json gives the key segment of an
// endpoint serving routes: the key's kind when they share one (planKey
// before a build number), "key" where one path takes several kinds
// (/result/{key}: a project, a plan or a result).
func keyParamName(routes []*Route, numbered bool) string {
	if numbered {
		return "planKey"
	}
	kind := routes[0].Key
	for _, rt := range routes[1:] {
		if rt.Key != kind {
			return "key"
		}
	}
	switch kind {
	case KeyProject:
		return "projectKey"
	case KeyPlan:
		return "planKey"
	case KeyResult, KeyJobResult:
		return "resultKey"
	}
	return "key"
}

// segmentOf is the index of the path segment that is param in pattern, or
// -1.
func segmentOf(pattern, param string) int {
	for i, seg := range strings.Split(pattern, "/") {
		if seg == param {
			return i
		}
	}
	return -1
}

// pathSegment returns segment i of an escaped path ("" when i is -1 or
// beyond the path), without allocating.
func pathSegment(path string, i int) string {
	if i < 0 {
		return ""
	}
	for ; i > 0; i-- {
		slash := strings.IndexByte(path, '/')
		if slash < 0 {
			return ""
		}
		path = path[slash+1:]
	}
	if slash := strings.IndexByte(path, '/'); slash >= 0 {
		return path[:slash]
	}
	return path
}

// servedPatterns are the paths of the route table split into segments
// (servedPath).
var servedPatterns = func() [][]string {
	var out [][]string
	for _, ep := range Endpoints() {
		out = append(out, strings.Split(ep.Pattern, "/"))
	}
	return out
}()

// servedPath reports whether an escaped path is one the route table
// serves (by shape: whether the key names something is the route's to
// say).
func servedPath(escaped string) bool {
	path := strings.Split(escaped, "/")
	for _, p := range servedPatterns {
		if _, ok := matchPattern(p, path); ok {
			return true
		}
	}
	return false
}

// matchPattern reports whether path (split at "/") fits pattern (a path
// of the table, split the same way), and how many segments matched
// literally, so a router can prefer the most literal match as Echo does.
// A parameter is one non-empty segment; a trailing {name...} is the rest.
func matchPattern(pattern, path []string) (literals int, ok bool) {
	for i, p := range pattern {
		switch {
		case strings.HasSuffix(p, "...}"):
			return literals, i < len(path)
		case i >= len(path):
			return 0, false
		case strings.HasPrefix(p, "{"):
			if path[i] == "" {
				return 0, false
			}
		case p != path[i]:
			return 0, false
		default:
			literals++
		}
	}
	return literals, len(pattern) == len(path)
}
