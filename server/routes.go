package server

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/api"
	"github.com/facade-dev/facade/auth"
	"github.com/facade-dev/facade/proxy"
	"github.com/facade-dev/facade/server/problem"
	"github.com/facade-dev/facade/web"
)

// routes shows every route the service answers, the handlers of each
// area (a) and the pipeline's stages (p) in their order. Pre-routing work
// (request id, headers) is done in ServeHTTP; CORS runs first of the rest
// so pre-flights on any path are answered without a token.
func (s *Server) routes(a areas, p stages, opsOnAPI bool, gatherer prometheus.Gatherer) {
	e := s.api
	// Authentication and the rate limit are global so unknown paths (404)
	// and wrong methods (405) reveal nothing to callers without a token and
	// cost the same as any other request; only the routes registered by
	// tokenFree and the ops routes are public.
	// Composed once around whatever handler the router chose (c.Handler(),
	// the route's or the 404's or 405's): Echo v4 composes e.Use's list
	// anew for every request, an allocation per middleware per request.
	outer := []echo.MiddlewareFunc{p.observe.observe}
	switch { // neither is composed at all when there is no tracing
	case p.observe.tracer != nil:
		outer = []echo.MiddlewareFunc{p.observe.traceRequest, p.observe.observe}
	case p.observe.propagator != nil:
		outer = []echo.MiddlewareFunc{p.observe.continueTrace(), p.observe.observe}
	}
	global := chain(func(c echo.Context) error { return c.Handler()(c) },
		append(outer, p.observe.recoverPanics, p.deadlines.writeDeadline, limitHeaders, p.origins.cors,
			p.authn.authenticate, p.limit.rateLimit)...)
	e.Use(func(echo.HandlerFunc) echo.HandlerFunc { return global })
	// The ops endpoints need no token. When FACADE_OPS_ADDR sets them
	// apart, the API address answers their paths 404 to anyone; the API
	// listener's /metrics carries no version.
	if opsOnAPI {
		opsRoutes(e, p.authn, a.ops, promhttp.HandlerFor(withoutVersions(gatherer), promhttp.HandlerOpts{}))
	}
	opsRoutes(s.ops, p.authn, a.ops, promhttp.HandlerFor(gatherer, promhttp.HandlerOpts{}))

	// Route-level middleware, not a Group: an Echo group with middleware
	// registers a catch-all that turns every 405 into a 404. Each route's
	// is composed once, by chain, not by Echo (which would compose it anew
	// for every request).
	api := []echo.MiddlewareFunc{requireXSRF, requireJSONAccept, limitBody}
	files := []echo.MiddlewareFunc{requireXSRF, limitBody, p.deadlines.streaming}
	// Reads answer whole documents: each gets its ETag and If-None-Match
	// (conditional.go). Downloads stream, so they do not.
	reads := append(api[:len(api):len(api)], conditional)

	// read registers a JSON GET route and its HEAD twin.
	read := func(path string, h echo.HandlerFunc) {
		e.Match([]string{http.MethodGet, http.MethodHead}, path, chain(h, reads...))
	}
	// public registers a GET and HEAD route that needs no token and
	// answers whatever the client accepts (a page, the description).
	public := func(path string, h echo.HandlerFunc) {
		tokenFree(e, p.authn, []string{http.MethodGet, http.MethodHead}, path, chain(h, conditional))
	}

	// Grades (docs/contract.md §4).
	read("/student/:studentId/english/grade", a.grades.getGrade)
	e.POST("/student/:studentId/english/grade", chain(a.grades.createGrade, api...))
	e.PUT("/student/:studentId/english/grade", chain(a.grades.updateGrade, api...))
	read("/student/:studentId/english/grade/history", a.grades.getGradeHistory)
	read("/class", a.grades.listClasses)
	// A class's grades answer JSON or, asked with Accept: text/csv, the
	// gradebook; the handler negotiates, so no JSON-only Accept check. Each
	// form has its own ETag, from its own bytes.
	e.Match([]string{http.MethodGet, http.MethodHead}, "/class/:classId/grades", chain(a.grades.getClassGrades, requireXSRF, limitBody, conditional))
	// A gradebook upload is CSV of up to 2 MiB (a lecture's), read as it
	// streams; every other body stays within 16 KiB.
	e.POST("/class/:classId/grades", chain(a.grades.uploadGradebook, requireXSRF, requireJSONAccept, limitBodyTo(maxGradebookBody)))
	// Posting: when students see their grades, and the class at a glance.
	read("/class/:classId/posting", a.grades.getPosting)
	e.PUT("/class/:classId/posting", chain(a.grades.setPosting, api...))
	e.POST("/class/:classId/grades/post", chain(a.grades.postGrades, api...))
	read("/class/:classId/grades/summary", a.grades.getSummary)

	// Accounts (docs/contract.md §5).
	read("/rs/account", a.accounts.listAccounts)
	read("/rs/account/:accountId", a.accounts.getAccount)
	read("/rs/account/:accountId/balance", a.accounts.getBalance)
	// A statement answers JSON pages or, asked with Accept: text/csv, the
	// range as a streamed download (no ETag: it is not held whole).
	statement := chain(a.accounts.getStatement, reads...)
	statementCSV := chain(a.accounts.getStatementCSV, requireXSRF, limitBody, p.deadlines.streaming)
	e.Match([]string{http.MethodGet, http.MethodHead}, "/rs/account/:accountId/transfers", func(c echo.Context) error {
		if acceptOf(c.Request()).asksFor("text/csv") {
			return statementCSV(c)
		}
		return statement(c)
	})
	// The same CSV at a path of its own, for a link the browser downloads
	// itself (a link cannot send Accept; the session cookie authorizes it).
	e.Match([]string{http.MethodGet, http.MethodHead}, "/rs/account/:accountId/transfers.csv", statementCSV)
	e.POST("/rs/transfer/from/:from/to/:to/amount/:amount", chain(a.accounts.transfer, api...))

	// Build results: Bamboo's read API and its artifact and log links,
	// proxied (docs/contract.md §6). Every path comes from the one route
	// table, proxy.Routes, with the ".json" twins Bamboo's clients send
	// (proxy.Endpoints). Downloads take any Accept: a file may be of any
	// media type.
	eps := proxy.Endpoints()
	for i := range eps {
		ep := &eps[i]
		switch {
		case ep.File:
			e.GET(ep.Pattern, chain(a.builds.buildDownload(ep), files...))
		case ep.Write:
			e.Match([]string{http.MethodPost, http.MethodDelete}, ep.Pattern, chain(a.builds.buildFavourite(ep), api...))
		default:
			read(ep.Pattern, a.builds.buildRead(ep))
		}
	}
	const rest = "/rest/api/latest"
	// Bamboo's writes (queueing, continuing or stopping a build; adding or
	// removing a label or comment) stay out: a 405 naming what the path
	// allows (GET and HEAD on the label and comment lists, nothing on the
	// queue).
	e.Any(rest+"/queue", writeRefused(""))
	e.Any(rest+"/queue/:key", writeRefused(""))
	e.Any(rest+"/result/:key/label/:name", writeRefused(""))
	e.Any(rest+"/result/:key/comment/:id", writeRefused(""))

	// Who is calling, and browser sign-in (package auth): the routes that
	// sign in or out take no credential, and exist only when sign-in is
	// configured.
	e.Match([]string{http.MethodGet, http.MethodHead}, auth.MePath, chain(a.signIn.me, api...))
	if a.signIn.signin != nil {
		get, post := []string{http.MethodGet}, []string{http.MethodPost}
		tokenFree(e, p.authn, get, auth.LoginPath, a.signIn.login)
		tokenFree(e, p.authn, get, auth.CallbackPath, a.signIn.callback)
		tokenFree(e, p.authn, post, auth.LogoutPath, chain(a.signIn.logout, limitBody))
		tokenFree(e, p.authn, post, auth.BackchannelLogoutPath, chain(a.signIn.backchannelLogout, limitBody))
	}

	// This API's description (package api): public, like the page.
	public("/openapi.json", openAPI)

	// What each error code means, for people (an error's type is its
	// page's path): public, the page's CSP.
	// The index is /problems (a path ending in "/" is one the OpenAPI
	// lint refuses); "/problems/", where it was first served, still
	// answers it: the page route's empty name.
	public("/problems", problemIndex)
	public("/problems/*", problemPage)

	// The browser page (package web): public, its own CSP.
	public("/ui", pageRoot)
	public("/ui/*", page)
	// The service's address: browsers to the page, programs an index.
	public("/", root)
	public("/favicon.ico", favicon)
}

// chain wraps h in mws, the first outermost, once, at registration.
func chain(h echo.HandlerFunc, mws ...echo.MiddlewareFunc) echo.HandlerFunc {
	for i := len(mws) - 1; i >= 0; i-- {
		h = mws[i](h)
	}
	return h
}

// openAPI serves the OpenAPI description of every route.
func openAPI(c echo.Context) error {
	return writeEncodedJSON(c, http.StatusOK, api.OpenAPI)
}

// problemPage serves the page describing one error code
// (server/problem's table).
func problemPage(c echo.Context) error {
	code := c.Param("*")
	if code == "" {
		return problemIndex(c)
	}
	b, ok := problem.Page(code)
	if !ok {
		return facade.ErrNotFound
	}
	return servePage(c, b)
}

// problemIndex lists every error code with its page.
func problemIndex(c echo.Context) error { return servePage(c, problem.Index()) }

func servePage(c echo.Context, b []byte) error {
	c.Response().Header().Set("Content-Security-Policy", web.CSP)
	return c.Blob(http.StatusOK, echo.MIMETextHTMLCharsetUTF8, b)
}

// isBambooPath reports whether r is for one of the Bamboo routes (the
// read API and the artifact downloads), whose errors also carry
// Atlassian's errorMessages member: Atlassian clients display it.
func isBambooPath(r *http.Request) bool {
	p := r.URL.Path
	return strings.HasPrefix(p, "/rest/api/") || strings.HasPrefix(p, "/browse/") || strings.HasPrefix(p, "/download/")
}

// writeRefused answers every method with 405 and the given Allow list:
// the path is one of Bamboo's write endpoints, which the facade does not
// offer.
func writeRefused(allow string) echo.HandlerFunc {
	return func(c echo.Context) error {
		c.Response().Header().Set(echo.HeaderAllow, allow)
		return facade.ErrMethodNotAllowed
	}
}

// tokenFree registers a route that needs no token, and lists it as such
// for the authenticator: a route is public exactly when it was registered
// here, so no second list can forget one or name one that is gone.
func tokenFree(e *echo.Echo, authn *authenticator, methods []string, path string, h echo.HandlerFunc) {
	authn.tokenFree[path] = true
	e.Match(methods, path, h)
}

// opsRoutes serves the ops endpoints on g; metrics is the /metrics handler
// of that listener. They need no token, and are listed by path
// (opsPaths), so that the API listener, when it does not serve them,
// answers their paths 404 to anyone.
func opsRoutes(g *echo.Echo, authn *authenticator, h *opsHandlers, metrics http.Handler) {
	for path, handler := range map[string]echo.HandlerFunc{
		"/healthz": h.healthz,
		"/readyz":  h.readyz,
		"/metrics": echo.WrapHandler(metrics),
	} {
		authn.opsPaths[path] = true
		g.GET(path, handler, conditional)
	}
}
