package server

import (
	"github.com/labstack/echo/v4"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/authz"
	"github.com/facade-dev/facade/internal/tracing"
)

// Every handler asks authz the same way, once its input is parsed and
// before any data is read (docs/contract.md §2's check order): a span for
// the decision, the decision, and on a "no" the audit line and the one
// 403 every refusal shares. gate.authorize is that step, written once, so
// that no route can ask without its span or refuse without its audit
// line. (The build routes ask inside package proxy, which does the same.)

// principal is who the request speaks for, as authenticate stored it
// (the zero Principal before, and on the public routes).
func principal(c echo.Context) facade.Principal {
	if rc := requestContextOf(c.Request().Context()); rc != nil {
		return rc.principal
	}
	return facade.Principal{}
}

// question is one decision a handler needs: op names it on its span and
// on the audit line, allow decides it for the caller, and target names
// what was asked about ("student:alice") on the audit line; it is called
// on a refusal only, so an allowed request builds no string for it.
type question struct {
	op     string
	allow  func(facade.Principal) bool
	target func() string
}

// gate is what an area's handlers hold to ask authz.
type gate struct{ az *authz.Authorizer }

// authorize asks q for the request's principal: nil when allowed, else
// the audited 403.
func (g gate) authorize(c echo.Context, q question) error {
	p := principal(c)
	span := tracing.Authorize(c.Request().Context(), q.op)
	allowed := q.allow(p)
	tracing.Allowed(span, allowed)
	if allowed {
		return nil
	}
	return g.refuse(c, q.op, q.target())
}

// refuse audit-logs a refusal of op on target and returns the one 403
// every refusal shares. authorize calls it; a gradebook row refused within
// an upload that was itself authorized uses it alone.
func (g gate) refuse(c echo.Context, op, target string) error {
	return g.az.Refuse(c.Request().Context(), principal(c), op, target)
}
