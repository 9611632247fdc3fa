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

// pathID returns the path parameter p, percent-decoded, when valid says
// it is well-formed, else a 400 bad_identifier naming p (docs/contract.md
// §3's formats, given before any look-up). Echo hands over the raw
// segment: an encoded '/', '.', '?', '#' or '%' is refused outright (it
// must never turn into a key or a path); anything else encoded (%40 for
// '@', as encodeURIComponent writes it) is decoded and then held to the
// same format.
func pathID(c echo.Context, p pathParam, valid func(string) bool) (string, error) {
	v := c.Param(p.route)
	if strings.Contains(v, "%") {
		if forbiddenEscapes.MatchString(v) {
			return "", badIdentifier(p)
		}
		decoded, err := url.PathUnescape(v)
		if err != nil {
			return "", badIdentifier(p)
		}
		v = decoded
	}
	if !valid(v) {
		return "", badIdentifier(p)
	}
	return v, nil
}

func badIdentifier(p pathParam) error {
	return facade.Refuse(facade.ErrBadIdentifier, p.documented, facade.ReasonMalformed)
}

var forbiddenEscapes = regexp.MustCompile(`(?i)%(2f|2e|3f|23|25)`)
