package server

import (
	"github.com/labstack/echo/v4"

	"github.com/facade-dev/facade"
)

// Every handler asks who is calling and, when the policy says no, refuses
// the same way: these two helpers are shared by the grade, class and
// account handlers.

// principal is who the request speaks for, as authenticate stored it.
func principal(c echo.Context) facade.Principal {
	return facade.PrincipalFrom(c.Request().Context())
}

// deny audit-logs a refusal and returns the one 403 every refusal shares.
func (s *Server) deny(c echo.Context, op, target string) error {
	return s.authz.Refuse(c.Request().Context(), principal(c), op, target)
}
