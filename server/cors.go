package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/auth"
)

// Origins holds the two CORS lists of docs/contract.md §2: read origins may use
// GET/HEAD, write origins POST/PUT. Echo's CORS middleware has one list for
// all methods (STACK-NOTES), hence this small one of our own.
type Origins struct {
	anyRead bool
	read    map[string]bool
	write   map[string]bool
}

// NewOrigins parses the comma lists. A "*" in the write list is refused: a
// wildcard there would let any site move money on a user's behalf. A
// parser of settings, not a component, it takes no Config.
func NewOrigins(read, write []string) (Origins, error) {
	o := Origins{read: map[string]bool{}, write: map[string]bool{}}
	for _, r := range read {
		if r == "*" {
			o.anyRead = true
			continue
		}
		o.read[r] = true
	}
	for _, w := range write {
		if w == "*" {
			return Origins{}, errWildcardWrite
		}
		o.write[w] = true
	}
	return o, nil
}

type configError string

func (e configError) Error() string { return string(e) }

const errWildcardWrite = configError("FACADE_CORS_WRITE_ORIGINS must list origins; '*' is refused")

func (o Origins) canRead(origin string) bool  { return o.anyRead || o.read[origin] || o.write[origin] }
func (o Origins) canWrite(origin string) bool { return o.write[origin] }

// methodsFor lists what origin may use, for Access-Control-Allow-Methods.
func (o Origins) methodsFor(origin string) string {
	if o.canWrite(origin) {
		return "GET, HEAD, POST, PUT"
	}
	return "GET, HEAD"
}

// allows reports whether origin may use method: GET/HEAD for read
// origins, POST/PUT for write origins, nothing else for anyone.
func (o Origins) allows(origin, method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead:
		return o.canRead(origin)
	case http.MethodPost, http.MethodPut:
		return o.canWrite(origin)
	}
	return false
}

// allowOriginValue is what Access-Control-Allow-Origin says for a read.
func (o Origins) allowOriginValue(origin, method string) string {
	if auth.SafeMethod(method) && o.anyRead && !o.write[origin] {
		return "*"
	}
	return origin
}

// cors answers pre-flights without a token, decorates actual cross-origin
// responses, and refuses unsafe requests from an origin that may not write
// before any handler runs (the browser alone is not trusted to enforce it).
func (o Origins) cors(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		origin := r.Header.Get("Origin")
		h := c.Response().Header()
		addVaryOrigin(h)
		if r.Method == http.MethodOptions {
			return o.preflight(c, origin)
		}
		if origin == "" {
			return next(c)
		}
		if !auth.SafeMethod(r.Method) && !o.canWrite(origin) {
			return facade.ErrOriginRefused
		}
		if o.allows(origin, r.Method) {
			h.Set("Access-Control-Allow-Origin", o.allowOriginValue(origin, r.Method))
			h.Set("Access-Control-Expose-Headers", exposedHeaders)
		}
		return next(c)
	}
}

func (o Origins) preflight(c echo.Context, origin string) error {
	method := c.Request().Header.Get("Access-Control-Request-Method")
	if origin == "" || method == "" || !o.allows(origin, method) {
		return facade.ErrOriginRefused
	}
	h := c.Response().Header()
	h.Set("Access-Control-Allow-Origin", o.allowOriginValue(origin, method))
	h.Set("Access-Control-Allow-Methods", o.methodsFor(origin))
	h.Set("Access-Control-Allow-Headers", allowedHeaders)
	h.Set("Access-Control-Max-Age", "600")
	return c.NoContent(http.StatusNoContent)
}

var varyOrigin = [1]string{"Origin"}

// addVaryOrigin is h.Add("Vary", "Origin") without an allocation when the
// answer has no Vary yet: the value is a shared, read-only slice of
// capacity one, so a later Add copies it.
func addVaryOrigin(h http.Header) {
	if _, ok := h["Vary"]; ok {
		h.Add("Vary", "Origin")
		return
	}
	h["Vary"] = varyOrigin[:]
}
