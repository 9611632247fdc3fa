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
