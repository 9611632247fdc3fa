package server

import (
	"github.com/labstack/echo/v4"

	"github.com/facade-dev/facade"
)

// Every handler asks who is calling and, when the policy says no, refuses
// the same way: these two helpers are shared by the grade, class and
// account handlers.

// principal is who the request speaks for, as authenticate stored it
// (the zero Principal before, and on the public routes).
func principal(c echo.Context) facade.Principal {
	if rc := requestContextOf(c.Request().Context()); rc != nil {
		return rc.principal
	}
	return facade.Principal{}
}

// deny audit-logs a refusal and returns the one 403 every refusal shares.
func (s *Server) deny(c echo.Context, op, target string) error {
	return s.authz.Refuse(c.Request().Context(), principal(c), op, target)
}
