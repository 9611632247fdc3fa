package server

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// meView is who the caller is, as GET /auth/me answers it.
type meView struct {
	Sub    string   `json:"sub"`
	Role   string   `json:"role"`
	Groups []string `json:"groups"`
	Via    string   `json:"via"`
}

// getMe answers who the bearer token's principal is, so the page shows
// who is signed in from the server's word, never from a token it has not
// had checked. Browser sign-in (issue 18) serves the full answer (groups,
// expires_at, via session) in its place.
func getMe(c echo.Context) error {
	p := principal(c)
	return c.JSON(http.StatusOK, meView{Sub: p.ID, Role: p.Role, Groups: []string{}, Via: "bearer"})
}
