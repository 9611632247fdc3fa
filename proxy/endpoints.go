package proxy

import (
	"context"
	"strings"

	"github.com/facade-dev/facade"
)

// The build routes as the server's router sees them: each Endpoint is one
// path of the table, which server/routes.go mounts with its own handler.
// The router matches the path and passes its parameters in (Request); this
// package validates them, decides the permission and returns the answer
// (Answer, or a Download to stream), or an error: a *facade.Error, which
// the server's one error path (server/problem) writes. This package writes
// no response and reads no path itself.

// Endpoint is one path the build routes answer.
type Endpoint struct {
	// Pattern is the path in the router's syntax (see Route.Paths).
	Pattern string
	// Routes are the entries served on the path, told apart by the shape
	// of the key.
	Routes []*Route
	// File: the answer is an artifact or log streamed as an attachment,
	// whatever the request's Accept, not a JSON document (Download).
	File bool
	// Write: the path takes POST and DELETE (a favourite: Favourite), not
	// GET.
	Write bool
	// keyParam is the name of the key segment in refusals (keyParamName).
	keyParam string
}

// Request is one request to a build route: who asks, and what the path's
// parameters and the query say, as the caller sent them.
type Request struct {
	Principal facade.Principal
	// Key and Number are the :key and :number parameters as the router
	// matched them; "" where the path has none. Read and Favourite parse
	// them once, into a facade.BuildKey (an encoded character, whether
	// the router decoded it or not, is outside every key's format).
	Key, Number string
	// Path is the request's escaped path (URL.EscapedPath): a download's
	// segments are unescaped one at a time (parseArtifactPath).
	Path     string
	RawQuery string
	// Host and TLS are where the request was sent: rewritten links lead
	// there, unless Config.PublicURL is set.
	Host string
	TLS  bool
	// Range and IfRange are the request's headers (downloads only).
	Range, IfRange string
}

// Endpoints lists every path of Routes in table order, each once, with the
// routes served on it, and after each path that ends in a fixed word its
// ".json" twin (/plan.json, /result/:key/label.json), which Bamboo's
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
			if rt.View != ViewFile && rt.View != ViewFavourite && !endsInParam(p) {
				add(p+".json", rt)
			}
		}
	}
	for i := range out {
		out[i].keyParam = keyParamName(out[i].Routes, strings.Contains(out[i].Pattern, "/:number"))
	}
	return out
}

// Read answers a GET or HEAD of a JSON route of ep. The order of work is
// the same for every route: key and query validated (400), permission
// decided (403), and only then the cache or the upstream.
func (h *Handler) Read(ctx context.Context, ep *Endpoint, req *Request) (Answer, error) {
	return h.serveKey(ctx, ep, req, readOnly)
}

// Favourite marks (mark) or unmarks the plan of a favourite route of ep
// for the caller, in the same order of work as Read. Success is 204.
func (h *Handler) Favourite(ctx context.Context, ep *Endpoint, req *Request, mark bool) error {
	op := unmarkFavourite
	if mark {
		op = markFavourite
	}
	_, err := h.serveKey(ctx, ep, req, op)
	return err
}

// favouriteOp is what a request does to the caller's favourites.
type favouriteOp uint8

const (
	readOnly favouriteOp = iota
	markFavourite
	unmarkFavourite
)

// serveKey parses the path's key once and serves the endpoint's route of
// its kind; when none fits, the refusal names the build number if that
// alone is wrong, else the key (as keyParam).
func (h *Handler) serveKey(ctx context.Context, ep *Endpoint, req *Request, op favouriteOp) (Answer, error) {
	key, kind, err := readKey(req.Key, req.Number)
	if err == nil {
		for _, rt := range ep.Routes {
			if rt.Key == kind {
				return h.serve(ctx, rt, key, req, op)
			}
		}
	}
	if req.Number != "" {
		if _, err := facade.ParsePlanKey(strings.TrimSuffix(req.Key, ".json")); err == nil {
			return Answer{}, badIdentifier("buildNumber")
		}
	}
	return Answer{}, badIdentifier(ep.keyParam)
}

// endsInParam reports whether a pattern's last segment is a parameter.
func endsInParam(pattern string) bool {
	last := pattern[strings.LastIndexByte(pattern, '/')+1:]
	return strings.HasPrefix(last, ":") || last == "*"
}

// keyParamName is the name api/openapi.json gives the key segment of an
// endpoint serving routes: the key's kind when they share one (planKey
// before a build number), "key" where one path takes several kinds
// (/result/:key: a project, a plan or a result).
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
// A parameter (":name") is one non-empty segment; a trailing "*" is the
// rest.
func matchPattern(pattern, path []string) (literals int, ok bool) {
	for i, p := range pattern {
		switch {
		case p == "*":
			return literals, i < len(path)
		case i >= len(path):
			return 0, false
		case strings.HasPrefix(p, ":"):
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
