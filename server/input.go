package server

import (
	"net/url"
	"regexp"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/facade-dev/facade"
)

// pathParam is one identifier in a route's path: its name in the route
// table (routes.go, for Echo's c.Param and the metrics' route label) and
// the name api/openapi.json gives it, which a refusal's errors item names
// so that a client can tell which segment was wrong.
type pathParam struct{ route, documented string }

var (
	studentParam = pathParam{"student_id", "studentId"}
	classParam   = pathParam{"class_id", "classId"}
	accountParam = pathParam{"id", "accountId"}
	fromParam    = pathParam{"from", "from"}
	toParam      = pathParam{"to", "to"}
)

// pathID parses the path parameter p, percent-decoded, with parse (one
// of facade's identifier constructors), or refuses it with a 400
// bad_identifier naming p (docs/contract.md §3's formats, given before any
// look-up). Echo hands over the raw segment: an encoded '/', '.', '?', '#'
// or '%' is refused outright (it must never turn into a key or a path);
// anything else encoded (%40 for '@', as encodeURIComponent writes it) is
// decoded and then held to the same format.
func pathID[T any](c echo.Context, p pathParam, parse func(string) (T, error)) (T, error) {
	var none T
	v := c.Param(p.route)
	if strings.Contains(v, "%") {
		if forbiddenEscapes.MatchString(v) {
			return none, badIdentifier(p)
		}
		decoded, err := url.PathUnescape(v)
		if err != nil {
			return none, badIdentifier(p)
		}
		v = decoded
	}
	id, err := parse(v)
	if err != nil {
		return none, badIdentifier(p)
	}
	return id, nil
}

func badIdentifier(p pathParam) error {
	return facade.Refuse(facade.ErrBadIdentifier, p.documented, facade.ReasonMalformed)
}

var forbiddenEscapes = regexp.MustCompile(`(?i)%(2f|2e|3f|23|25)`)
