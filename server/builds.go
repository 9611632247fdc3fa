package server

import (
	"github.com/labstack/echo/v4"

	"github.com/facade-dev/facade"
)

type buildRoute int

const (
	projectsRoute buildRoute = iota
	resultsRoute
	artifactRoute
)

// buildsHandler picks the proxy's handler for r, or a 503 when this
// instance has no upstream configured (FACADE_UPSTREAM_URL unset).
func (s *Server) buildsHandler(r buildRoute) echo.HandlerFunc {
	if s.builds == nil {
		return func(echo.Context) error {
			return facade.Errorf(facade.EUNAVAILABLE, facade.DetailBuildsNotConfigured)
		}
	}
	switch r {
	case projectsRoute:
		return s.builds.Projects
	case resultsRoute:
		return s.builds.Results
	default:
		return s.builds.Artifact
	}
}
