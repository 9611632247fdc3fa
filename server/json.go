package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/facade-dev/facade/cache"
	"github.com/facade-dev/facade/proxy"
)

// A handler answers a value with Echo's c.JSON (encoding/json:
// HTML-escaped strings, a closing newline; indented with ?pretty); the
// answers already encoded leave here: writeEncodedJSON for bytes (the API
// description), writeAnswer for a build route's view. Errors are the one
// error path's (server/problem).

// writeEncodedJSON answers b, a JSON document already encoded.
func writeEncodedJSON(c echo.Context, status int, b []byte) error {
	return c.Blob(status, echo.MIMEApplicationJSON, b)
}

// writeAnswer sends a build route's answer with its tag and length, so
// that conditional decides on If-None-Match from the headers and passes
// the body through. An error is the client's connection failing, after
// the status went out.
func writeAnswer(c echo.Context, a proxy.Answer) error {
	h := c.Response().Header()
	// The values are shared, read-only slices of capacity one (keys
	// spelled canonically, as Set would): nothing edits a header value in
	// place, and an Add copies. Identical to four Sets, without their
	// allocations.
	h["X-Cache"] = cacheStatusValue(a.Cache)
	h["Etag"] = a.ETag
	// A known length spares the client chunked decoding of large lists.
	h["Content-Length"] = a.Length
	h["Content-Type"] = jsonType[:]
	c.Response().WriteHeader(http.StatusOK)
	_, err := c.Response().Write(a.Body)
	return err
}

var (
	jsonType      = [1]string{"application/json"}
	cacheStatuses = [3]string{string(cache.Hit), string(cache.Miss), string(cache.Stale)}
)

// cacheStatusValue is the X-Cache header value of status, shared.
func cacheStatusValue(status cache.Status) []string {
	for i := range cacheStatuses {
		if cacheStatuses[i] == string(status) {
			return cacheStatuses[i : i+1 : i+1]
		}
	}
	return []string{string(status)}
}
