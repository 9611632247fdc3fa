package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/web"
)

// page serves the embedded browser page (package web) below /ui/. It needs
// no token (the page is loaded before one is pasted) and carries the page's
// own Content-Security-Policy in place of the API's; every call the page
// then makes goes through the API's full pipeline.
func page(c echo.Context) error {
	f, ok := web.Lookup(c.Param("*"))
	if !ok {
		return facade.ErrNotFound
	}
	c.Response().Header().Set("Content-Security-Policy", web.CSP)
	return c.Blob(http.StatusOK, f.ContentType, f.Body)
}

// pageRoot sends /ui to /ui/ so the page's relative links resolve.
func pageRoot(c echo.Context) error {
	return c.Redirect(http.StatusMovedPermanently, "/ui/")
}

// rootIndex is what / answers a program: where the service's parts are.
var rootIndex = map[string]string{
	"page":     "/ui/",
	"openapi":  "/openapi.json",
	"problems": "/problems",
	"me":       "/auth/me",
}

// root answers /: a browser (an Accept that names text/html) goes to the
// page, a program gets a small JSON index. It needs no token, so a person
// who types the service's address never meets a 401.
func root(c echo.Context) error {
	c.Response().Header().Add(echo.HeaderVary, "Accept")
	if acceptOf(c.Request()).asksFor("text/html") {
		return c.Redirect(http.StatusSeeOther, "/ui/")
	}
	return c.JSON(http.StatusOK, rootIndex)
}

// favicon sends /favicon.ico, which browsers ask for on pages that name
// no icon (an API answer opened in a tab), to the page's icon.
func favicon(c echo.Context) error {
	return c.Redirect(http.StatusMovedPermanently, "/ui/favicon.svg")
}
