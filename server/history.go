package server

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/proxy/history"
)

// BuildHistory answers a plan's builds over time (package proxy/history):
// the tests of its recent finished builds, and their trend, encoded.
// Errors are *facade.Error.
type BuildHistory interface {
	Tests(ctx context.Context, plan facade.PlanKey, last int) ([]byte, error)
	Trend(ctx context.Context, plan facade.PlanKey, last int) ([]byte, error)
}

// historyHandlers serve /builds/{K-P}/tests and /builds/{K-P}/trend as
// every plan route is served (docs/build-routes.md, "Builds over time"):
// the key and ?last parsed (400), view on the plan or its project decided
// from the identifiers alone (403, the same whether the plan exists or
// not), and only then the data (404 for a plan Bamboo does not have).
type historyHandlers struct {
	gate
	history BuildHistory // nil: no upstream, 503
}

// planParam names the plan key segment, as api/openapi.json does.
const planParam = "planKey"

func (h *historyHandlers) tests(c echo.Context) error {
	return h.serve(c, "view_build_tests", history.DefaultTestsLast, BuildHistory.Tests)
}

func (h *historyHandlers) trend(c echo.Context) error {
	return h.serve(c, "view_build_trend", history.DefaultTrendLast, BuildHistory.Trend)
}

func (h *historyHandlers) serve(c echo.Context, op string, def int, answer func(BuildHistory, context.Context, facade.PlanKey, int) ([]byte, error)) error {
	if h.history == nil {
		return errNoUpstream
	}
	plan, err := pathID(c, planParam, facade.ParsePlanKey)
	if err != nil {
		return err
	}
	raw, given := c.QueryParams()["last"]
	last, err := history.ParseLast(firstValue(raw), given, def)
	if err != nil {
		return err
	}
	if err := h.authorize(c, question{op: op,
		allow:  func(p facade.Principal) bool { return h.az.CanViewPlan(p, plan) },
		target: func() string { return "plan:" + plan.String() },
	}); err != nil {
		return err
	}
	b, err := answer(h.history, c.Request().Context(), plan, last)
	if err != nil {
		return err
	}
	return writeEncodedJSON(c, http.StatusOK, b)
}

func firstValue(vs []string) string {
	if len(vs) == 0 {
		return ""
	}
	return vs[0]
}
