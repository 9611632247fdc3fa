package server

import (
	"net/url"
	"regexp"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/facade-dev/facade"
)

// The path parameters that are identifiers, each named once: as the
// route table (routes.go) and api/openapi.json both name it, so that
// c.Param finds it and a refusal's errors item names the segment a client
// must fix.
const (
	studentParam = "studentId"
	classParam   = "classId"
	accountParam = "accountId"
	fromParam    = "from"
	toParam      = "to"
)

// pathID parses the path parameter name, percent-decoded, with parse (one
// of facade's identifier constructors), or refuses it with a 400
// bad_identifier naming it (docs/contract.md §3's formats, given before any
// look-up). Echo hands over the raw segment: an encoded '/', '.', '?', '#'
// or '%' is refused outright (it must never turn into a key or a path);
// anything else encoded (%40 for '@', as encodeURIComponent writes it) is
// decoded and then held to the same format.
func pathID[T any](c echo.Context, name string, parse func(string) (T, error)) (T, error) {
	var none T
	v := c.Param(name)
	if strings.Contains(v, "%") {
		if forbiddenEscapes.MatchString(v) {
			return none, badIdentifier(name)
		}
		decoded, err := url.PathUnescape(v)
		if err != nil {
			return none, badIdentifier(name)
		}
		v = decoded
	}
	id, err := parse(v)
	if err != nil {
		return none, badIdentifier(name)
	}
	return id, nil
}

func badIdentifier(name string) error {
	return facade.Refuse(facade.ErrBadIdentifier, name, facade.ReasonMalformed)
}

var forbiddenEscapes = regexp.MustCompile(`(?i)%(2f|2e|3f|23|25)`)
