package proxy

import (
	"context"

	"github.com/facade-dev/facade"
)

// Favourites belong to the person, not to the service account the facade
// uses upstream: Bamboo's own isFavourite and favourite filter would be
// that account's. Every upstream document is read with isFavourite false
// (rewriteTree), and the caller's own favourites, kept by the facade
// (package favourites), are applied per request: isFavourite on plan
// objects, and ?favourite on list routes keeps the caller's favourite
// plans. Nothing about favourites is sent upstream.

// Favourites are the plans each person marked. Package favourites keeps
// them in Redis.
type Favourites interface {
	// Plans are the plan keys ("K-P") p marked, as a set.
	Plans(ctx context.Context, p facade.Principal) (map[string]bool, error)
	// Mark and Unmark add and remove one plan; both are idempotent.
	Mark(ctx context.Context, p facade.Principal, planKey string) error
	Unmark(ctx context.Context, p facade.Principal, planKey string) error
}

// noFavourites is the store of a Handler configured without one: nobody
// has favourites, and marking one is refused as the store's absence.
type noFavourites struct{}

func (noFavourites) Plans(context.Context, facade.Principal) (map[string]bool, error) {
	return nil, nil
}
func (noFavourites) Mark(context.Context, facade.Principal, string) error {
	return facade.ErrInternal
}
func (noFavourites) Unmark(context.Context, facade.Principal, string) error {
	return facade.ErrInternal
}

// carriesPlans are the views whose answer holds plan objects (and so the
// caller's isFavourite).
func carriesPlans(rt *Route) bool {
	switch rt.View {
	case ViewProjects, ViewProject, ViewPlans, ViewPruned:
		return true
	}
	return rt.Item == "branch"
}

// favouritesFor reads the caller's favourites when the route needs them.
func (h *Handler) favouritesFor(ctx context.Context, p facade.Principal, rt *Route, q routeQuery) (map[string]bool, error) {
	if !q.favourite && !carriesPlans(rt) {
		return nil, nil
	}
	favs, err := h.cfg.Favourites.Plans(ctx, p)
	if err != nil {
		return nil, asFacadeError(err)
	}
	return favs, nil
}

// keepFavourites is a principal's visibility narrowed to favs: the
// favourite plans, and the projects holding one.
func keepFavourites(idx *projectsIndex, visible []visibleProject, favs map[string]bool) []visibleProject {
	var out []visibleProject
	for _, v := range visible {
		proj := &idx.projects[v.project]
		var plans []int32
		for j, plan := range proj.plans {
			if (v.plans == nil || containsIndex(v.plans, int32(j))) && favs[proj.key+"-"+plan.key] {
				plans = append(plans, int32(j))
			}
		}
		if plans != nil {
			out = append(out, visibleProject{project: v.project, plans: plans})
		}
	}
	return out
}

func containsIndex(s []int32, j int32) bool {
	for _, x := range s {
		if x == j {
			return true
		}
	}
	return false
}

// markFavourites sets isFavourite on the plan objects of a finished view
// whose key the caller marked, at the places finish noted: the view's
// bytes are copied with "true" for "false" there, and tagged anew. Views
// hold false everywhere, so a caller without favourites (or with none in
// the view) is served the shared view as it is.
func markFavourites(v view, favs map[string]bool) view {
	if len(favs) == 0 || len(v.marks) == 0 {
		return v
	}
	var body []byte
	from := 0
	for _, m := range v.marks {
		if !favs[m.plan] {
			continue
		}
		if body == nil {
			body = make([]byte, 0, len(v.body))
		}
		body = append(append(body, v.body[from:m.at]...), "true"...)
		from = m.at + len("false")
	}
	if body == nil {
		return v
	}
	return newView(append(body, v.body[from:]...))
}

// favourite serves POST and DELETE /rest/api/latest/plan/:key/favourite
// (Bamboo's own routes): the caller marks or unmarks a plan it may view.
// The answer is 204; the plan's existence upstream is not asked (the
// permission decides, from the key alone, as for every route).
func (h *Handler) favourite(ctx context.Context, p facade.Principal, plan facade.PlanKey, op favouriteOp) error {
	// serve authorized view on the plan already.
	var err error
	switch op {
	case unmarkFavourite:
		err = h.cfg.Favourites.Unmark(ctx, p, plan.String())
	case markFavourite:
		err = h.cfg.Favourites.Mark(ctx, p, plan.String())
	default:
		return facade.ErrInternal // a favourite route is only ever a write
	}
	if err != nil {
		return asFacadeError(err)
	}
	return nil
}
