package server

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// routes shows every route the service answers. Pre-routing middleware
// (request id, headers) is set in newEcho; CORS runs first of the rest so
// pre-flights on any path are answered without a token.
func (s *Server) routes() {
	e := s.e
	// Authentication and the rate limit are global so unknown paths (404)
	// and wrong methods (405) reveal nothing to callers without a token and
	// cost the same as any other request; only the ops endpoints are public.
	e.Use(s.observe, s.recoverPanics, s.cors, s.authenticate, s.rateLimit)
	if s.cfg.OpsOnAPI {
		s.opsRoutes(e)
	}
	s.opsRoutes(s.ops)

	// Route-level middleware, not a Group: an Echo group with middleware
	// registers a catch-all that turns every 405 into a 404.
	api := []echo.MiddlewareFunc{requireXSRF, requireJSONAccept, limitBody}
	files := []echo.MiddlewareFunc{requireXSRF, limitBody}

	// read registers a JSON GET route and its HEAD twin.
	read := func(path string, h echo.HandlerFunc) {
		e.Match([]string{http.MethodGet, http.MethodHead}, path, h, api...)
	}

	// Grades (SPEC section 4).
	read("/student/:student_id/english/grade", s.getGrade)
	e.POST("/student/:student_id/english/grade", s.createGrade, api...)
	e.PUT("/student/:student_id/english/grade", s.updateGrade, api...)

	// Accounts (SPEC section 5).
	read("/rs/account/:id", s.getAccount)
	read("/rs/account/:id/balance", s.getBalance)
	read("/rs/account/:id/transfers", s.getStatement)
	e.POST("/rs/transfer/from/:from/to/:to/amount/:amount", s.transfer, api...)

	// Build results, proxied to Bamboo (SPEC section 6). The .json forms are
	// what real Bamboo clients send.
	read("/rest/api/latest/project", s.builds.Projects)
	read("/rest/api/latest/project.json", s.builds.Projects)
	read("/rest/api/latest/result/:key", s.builds.Results)
	// Artifact downloads: the upstream's own link forms, under our host. No
	// Accept check here: a download may ask for any media type.
	e.GET("/browse/:resultKey/artifact/*", s.builds.Artifact, files...)
	e.GET("/download/*", s.builds.Artifact, files...)
}

func (s *Server) opsRoutes(g *echo.Echo) {
	g.GET("/healthz", s.healthz)
	g.GET("/readyz", s.readyz)
	g.GET("/metrics", s.metrics)
}
