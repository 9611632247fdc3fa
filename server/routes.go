package server

import "github.com/labstack/echo/v4"

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

	// Grades (SPEC section 4).
	e.GET("/student/:student_id/english/grade", s.getGrade, api...)
	e.POST("/student/:student_id/english/grade", s.createGrade, api...)
	e.PUT("/student/:student_id/english/grade", s.updateGrade, api...)

	// Accounts (SPEC section 5).
	e.GET("/rs/account/:id", s.getAccount, api...)
	e.GET("/rs/account/:id/balance", s.getBalance, api...)
	e.GET("/rs/account/:id/transfers", s.getStatement, api...)
	e.POST("/rs/transfer/from/:from/to/:to/amount/:amount", s.transfer, api...)

	// Build results, proxied to Bamboo (SPEC section 6). The .json forms are
	// what real Bamboo clients send.
	e.GET("/rest/api/latest/project", s.buildsHandler(projectsRoute), api...)
	e.GET("/rest/api/latest/project.json", s.buildsHandler(projectsRoute), api...)
	e.GET("/rest/api/latest/result/:key", s.buildsHandler(resultsRoute), api...)
	// Artifact downloads: the upstream's own link forms, under our host. No
	// Accept check here: a download may ask for any media type.
	e.GET("/browse/:resultKey/artifact/*", s.buildsHandler(artifactRoute), files...)
	e.GET("/download/*", s.buildsHandler(artifactRoute), files...)
}

func (s *Server) opsRoutes(g *echo.Echo) {
	g.GET("/healthz", s.healthz)
	g.GET("/readyz", s.readyz)
	g.GET("/metrics", s.metrics)
}
