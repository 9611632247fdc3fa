package proxy

import (
	"context"
	"errors"
	"strings"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/cache"
	"github.com/facade-dev/facade/internal/tracing"
	"github.com/facade-dev/facade/upstream"
)

// readKey parses a request's :key (and :number) path parameters, as the
// router matched them, into a facade.BuildKey: the one parse of the key,
// whose shape (keyKind) picks the endpoint's route. A ".json" suffix on
// the last one is Bamboo's format selector. An encoded character is
// outside every key's format.
func readKey(raw, number string) (facade.BuildKey, KeyKind, error) {
	switch {
	case raw == "" && number == "":
		return facade.BuildKey{}, KeyNone, nil
	case number != "":
		plan, err := facade.ParsePlanKey(raw)
		if err != nil {
			return facade.BuildKey{}, 0, err
		}
		k, err := plan.Result(strings.TrimSuffix(number, ".json"))
		return k, KeyResult, err
	}
	k, err := facade.ParseBuildKey(strings.TrimSuffix(raw, ".json"))
	return k, keyKind(k), err
}

// keyKind is what a parsed key names.
func keyKind(k facade.BuildKey) KeyKind {
	switch {
	case k.IsZero():
		return KeyNone
	case k.Plan().IsZero():
		return KeyProject
	case k.Number() == "":
		return KeyPlan
	case k.Job() != "":
		return KeyJobResult
	}
	return KeyResult
}

func (h *Handler) serve(ctx context.Context, rt *Route, key facade.BuildKey, req *Request, op favouriteOp) (Answer, error) {
	q, err := parseRouteQuery(req.RawQuery, rt)
	if err != nil {
		return Answer{}, err
	}
	p := req.Principal
	switch rt.Need {
	case NeedPlan:
		if err := h.authorizePlan(ctx, "view_"+rt.Name, p, key.Plan()); err != nil {
			return Answer{}, err
		}
	case NeedProject:
		if err := h.authorizeProject(ctx, "view_"+rt.Name, p, key.Project()); err != nil {
			return Answer{}, err
		}
	}
	if rt.View == ViewFavourite || op != readOnly {
		return Answer{}, h.favourite(ctx, p, key.Plan(), op)
	}
	favs, err := h.favouritesFor(ctx, p, rt, q)
	if err != nil {
		return Answer{}, err
	}
	var (
		v      view
		status cache.Status
	)
	switch rt.View {
	case ViewProjects:
		v, status, err = h.projects(ctx, req, q, favs)
	case ViewProject:
		v, status, err = h.project(ctx, req, q, key.Project().String(), favs)
	case ViewPlans:
		v, status, err = h.plans(ctx, req, q, favs)
	default:
		v, status, err = h.document1(ctx, req, rt, key, q, favs)
	}
	if err != nil {
		return Answer{}, err
	}
	return markFavourites(v, favs).answer(status), nil
}

// document1 answers the routes served from one upstream document.
func (h *Handler) document1(ctx context.Context, req *Request, rt *Route, key facade.BuildKey, q routeQuery, favs map[string]bool) (view, cache.Status, error) {
	p := req.Principal
	entry, doc, err := h.docs.get(ctx, docKey(rt, key, q), h.fetcher(rt, key, q), h.fresh.lifetime(rt, key))
	if err != nil {
		return view{}, "", err
	}
	base := h.publicBase(req)
	var v view
	switch {
	case rt.View == ViewList && q.favourite:
		v, err = h.vm.favouriteListView(doc, base, p, rt, q, favs)
	case rt.View == ViewList:
		v, err = h.vm.listView(doc, base, p, rt, q)
	case rt.View == ViewPruned:
		v, err = h.vm.prunedView(doc, base, p, rt, q)
	case q.favourite && rt.List != "" && !favs[key.Plan().String()]:
		// A page of one plan's results, and the plan is not a favourite.
		v, err = h.vm.emptyListView(doc, base, rt)
	default:
		v, err = h.vm.rewrittenView(doc, base)
	}
	return v, entry.Status, err
}

// authorizeProject decides NeedProject: view on the project, or on one of
// the plans the shared project list gives it. The list is the same
// document for every caller and every project (no upstream call names
// the target), and the refusal is the same whether the project exists or
// not.
func (h *Handler) authorizeProject(ctx context.Context, op string, p facade.Principal, project facade.ProjectKey) error {
	defer tracing.Authorize(ctx, op).End()
	if h.az.CanViewProject(p, project) {
		return nil
	}
	idx, doc, _, err := h.projectIndexFor(ctx, false)
	if err != nil {
		return err
	}
	if _, ok := findVisible(idx, h.vm.visibility(doc, idx, p), project.String()); ok {
		return nil
	}
	return h.az.Refuse(ctx, p, op, "project:"+project.String())
}

// docKey names the cached document of a request: route, upstream path and
// upstream query, all built from validated parts.
func docKey(rt *Route, key facade.BuildKey, q routeQuery) string {
	vals := q.withRecount(rt).upstreamValues(rt.Cache == CachePage && rt.List != "")
	return "doc:" + rt.Name + ":" + upstreamPath(rt, key).String() + "?" + vals.Encode()
}

// upstreamPath is the route's upstream document about key.
func upstreamPath(rt *Route, key facade.BuildKey) upstream.Path {
	at := rt.Upstream
	if rt.Key != KeyNone {
		at.Key = key
	}
	return at
}

// fetcher asks upstream for exactly what the request selected.
func (h *Handler) fetcher(rt *Route, key facade.BuildKey, q routeQuery) fetchFunc {
	at := upstreamPath(rt, key)
	q = q.withRecount(rt)
	if rt.Cache == CacheCollected {
		vals := q.upstreamValues(false)
		return func(ctx context.Context) (upstream.Document, error) { return h.col.collect(ctx, rt, at, vals) }
	}
	vals := q.upstreamValues(rt.List != "")
	return func(ctx context.Context) (upstream.Document, error) {
		doc, err := h.up.Document(ctx, rt.Name, at, vals)
		if err != nil {
			return doc, err
		}
		// Checked before it is cached: a document of another shape would
		// otherwise be served (as a 502) for a whole TTL.
		if _, ok := doc.Object[rt.List].(map[string]any); rt.List != "" && !ok {
			return doc, upstreamBad(errNoList)
		}
		return doc, nil
	}
}

var errNoList = errors.New("upstream list document has no list object")
