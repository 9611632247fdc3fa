package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/cache"
	"github.com/facade-dev/facade/internal/tracing"
)

// buildKey is a parsed key: project, plan, job and number as far as the
// route's key kind has them. number is digits or "latest". plan is zero
// for a project's key.
type buildKey struct {
	project     facade.ProjectKey
	plan        facade.PlanKey
	job, number string
}

func (k buildKey) planRef() facade.PlanKey { return k.plan }

// String is the key as Bamboo writes it: PROJ, PROJ-PLAN, PROJ-PLAN-7,
// PROJ-PLAN-JOB-7.
func (k buildKey) String() string {
	s := k.project.String()
	for _, part := range []string{k.plan.Short(), k.job, k.number} {
		if part != "" {
			s += "-" + part
		}
	}
	return s
}

// keyText is a request's :key (and :number) path parameters read once:
// split at its dashes, its project and plan keys parsed, whichever route's
// key kind then reads it (as). They arrive still percent-encoded, so an
// encoded character is simply outside the allowed set. A ".json" suffix
// on the last one is Bamboo's format selector.
type keyText struct {
	empty   bool     // no key and no number: the key of KeyNone
	parts   []string // the key split at its dashes
	number  string   // the :number parameter, "" when the route has none
	project facade.ProjectKey
	plan    facade.PlanKey // zero when the key has no (well-formed) plan part
	ok      bool           // the project, and the plan when there is one, are well-formed
}

// readKey splits and parses the key parameters once.
func readKey(raw, number string) keyText {
	if number != "" {
		number = strings.TrimSuffix(number, ".json")
	} else {
		raw = strings.TrimSuffix(raw, ".json")
	}
	kt := keyText{empty: raw == "" && number == "", parts: strings.Split(raw, "-"), number: number}
	var err error
	if kt.project, err = facade.ParseProjectKey(kt.parts[0]); err != nil {
		return kt
	}
	if len(kt.parts) > 1 {
		if kt.plan, err = kt.project.Plan(kt.parts[1]); err != nil {
			return kt
		}
	}
	kt.ok = true
	return kt
}

// as reads the key as one of kind, or says it is not one.
func (kt keyText) as(kind KeyKind) (buildKey, bool) {
	if kind == KeyNone {
		return buildKey{}, kt.empty
	}
	if !kt.ok {
		return buildKey{}, false
	}
	k, parts, number := buildKey{project: kt.project, plan: kt.plan}, kt.parts, kt.number
	switch {
	case kind == KeyProject:
		return k, len(parts) == 1 && number == ""
	case kind == KeyPlan:
		return k, len(parts) == 2 && number == ""
	case kind == KeyResult && number != "":
		k.number = number
		return k, len(parts) == 2 && validResultNumber(number)
	case kind == KeyResult:
		if len(parts) != 3 {
			return buildKey{}, false
		}
		k.number = parts[2]
		return k, validResultNumber(k.number)
	case kind == KeyJobResult:
		if len(parts) != 4 || number != "" {
			return buildKey{}, false
		}
		k.job, k.number = parts[2], parts[3]
		return k, facade.ValidPlanKey(k.job) && validBuildNumber(k.number)
	}
	return buildKey{}, false
}

func validResultNumber(s string) bool { return s == "latest" || validBuildNumber(s) }

func (h *Handler) serve(ctx context.Context, rt *Route, key buildKey, req *Request, op favouriteOp) (Answer, error) {
	q, err := parseRouteQuery(req.RawQuery, rt)
	if err != nil {
		return Answer{}, err
	}
	p := req.Principal
	switch rt.Need {
	case NeedPlan:
		if err := h.authorizePlan(ctx, "view_"+rt.Name, p, key.planRef()); err != nil {
			return Answer{}, err
		}
	case NeedProject:
		if err := h.authorizeProject(ctx, "view_"+rt.Name, p, key.project); err != nil {
			return Answer{}, err
		}
	}
	if rt.View == ViewFavourite || op != readOnly {
		return Answer{}, h.favourite(ctx, p, key, op)
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
		v, status, err = h.project(ctx, req, q, key.project.String(), favs)
	case ViewPlans:
		v, status, err = h.plans(ctx, req, q, favs)
	default:
		v, status, err = h.document1(ctx, req, rt, key, q, favs)
	}
	if err != nil {
		return Answer{}, err
	}
	if v, err = markFavourites(v, favs); err != nil {
		return Answer{}, err
	}
	return v.answer(status), nil
}

// document1 answers the routes served from one upstream document.
func (h *Handler) document1(ctx context.Context, req *Request, rt *Route, key buildKey, q routeQuery, favs map[string]bool) (view, cache.Status, error) {
	p := req.Principal
	entry, err := h.docs.get(ctx, docKey(rt, key, q), h.fetcher(rt, key, q), h.fresh.lifetime(rt, key))
	if err != nil {
		return view{}, "", err
	}
	base := h.publicBase(req)
	var v view
	switch {
	case rt.View == ViewList && q.favourite:
		v, err = h.vc.favouriteListView(entry, base, p, rt, q, favs)
	case rt.View == ViewList:
		v, err = h.vc.listView(entry, base, p, rt, q)
	case rt.View == ViewPruned:
		v, err = h.vc.prunedView(entry, base, p, rt, q)
	case q.favourite && rt.List != "" && !favs[key.planRef().String()]:
		// A page of one plan's results, and the plan is not a favourite.
		v, err = h.vc.emptyListView(entry, base, rt)
	default:
		v, err = h.vc.rewrittenView(entry, base)
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
	idx, _, err := h.projectIndex(ctx)
	if err != nil {
		return err
	}
	if _, ok := findVisible(idx, h.vc.visibility(idx, h.az.Version(), p), project.String()); ok {
		return nil
	}
	return h.az.Refuse(ctx, p, op, "project:"+project.String())
}

// docKey names the cached document of a request: route, upstream path and
// upstream query, all built from validated parts.
func docKey(rt *Route, key buildKey, q routeQuery) string {
	vals := q.withRecount(rt).upstreamValues(rt.Cache == CachePage && rt.List != "")
	return "doc:" + rt.Name + ":" + strings.Join(upstreamPath(rt, key), "/") + "?" + vals.Encode()
}

func upstreamPath(rt *Route, key buildKey) []string {
	out := make([]string, len(rt.Upstream))
	for i, seg := range rt.Upstream {
		if seg == "{key}" {
			seg = key.String()
		}
		out[i] = seg
	}
	return out
}

// fetcher asks upstream for exactly what the request selected.
func (h *Handler) fetcher(rt *Route, key buildKey, q routeQuery) func(context.Context) ([]byte, error) {
	segments := upstreamPath(rt, key)
	q = q.withRecount(rt)
	if rt.Cache == CacheCollected {
		vals := q.upstreamValues(false)
		return func(ctx context.Context) ([]byte, error) { return h.col.collect(ctx, rt, segments, vals) }
	}
	vals := q.upstreamValues(rt.List != "")
	return func(ctx context.Context) ([]byte, error) {
		body, err := h.up.Document(ctx, rt.Name, vals, segments...)
		if err != nil {
			return nil, err
		}
		// Checked before it is cached: a document of another shape would
		// otherwise be served (as a 502) for a whole TTL.
		if rt.List != "" {
			if err := checkListShape(body, rt.List); err != nil {
				return nil, upstreamBad(err)
			}
		}
		return body, nil
	}
}

var errNoList = errors.New("upstream list document has no list object")

func checkListShape(body []byte, list string) error {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(body, &doc); err != nil {
		return err
	}
	if t := bytes.TrimSpace(doc[list]); len(t) == 0 || t[0] != '{' {
		return errNoList
	}
	return nil
}

// rewriteDocument decodes a document, rewrites every upstream URL in it to
// the placeholder and encodes it again.
func rewriteDocument(body []byte) ([]byte, error) {
	top, err := decodeRewritten(body)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := encodeJSON(&buf, top); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
