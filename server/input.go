package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"reflect"
	"regexp"
	"strings"
	"sync"

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

// decodeJSON reads a JSON body into dst strictly: application/json only
// (415), at most 16 KiB (413), no unknown fields and nothing after the
// value (400). Identifiers never come from the body.
func decodeJSON(c echo.Context, dst any) error {
	mt, _, err := mime.ParseMediaType(c.Request().Header.Get(echo.HeaderContentType))
	if err != nil || mt != echo.MIMEApplicationJSON {
		return facade.ErrUnsupportedMedia
	}
	body, err := io.ReadAll(c.Request().Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return facade.ErrBodyTooLarge
		}
		return facade.Wrap(facade.ErrMalformedBody, err)
	}
	if err := checkObjectKeys(body, dst); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return facade.Wrap(facade.ErrMalformedBody, err)
	}
	if dec.More() || dec.InputOffset() != int64(len(bytes.TrimRight(body, " \t\r\n"))) {
		return facade.ErrMalformedBody
	}
	return nil
}

// checkObjectKeys requires body to be one JSON object whose keys are json
// tag names of dst's struct, exactly (encoding/json alone would accept
// "GRADE" for "grade") and each at most once (it would keep the last).
func checkObjectKeys(body []byte, dst any) error {
	allowed := jsonFieldNames(dst)
	dec := json.NewDecoder(bytes.NewReader(body))
	bad := facade.ErrMalformedBody
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return bad
	}
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		key, ok := t.(string)
		if err != nil || !ok || !allowed[key] || seen[key] {
			return bad
		}
		seen[key] = true
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return bad
		}
	}
	return nil
}

// jsonFieldNames lists the json names of the fields of *struct dst,
// worked out once per type.
func jsonFieldNames(dst any) map[string]bool {
	t := reflect.TypeOf(dst).Elem()
	if names, ok := fieldNames.Load(t); ok {
		return names.(map[string]bool)
	}
	names := map[string]bool{}
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
			names[name] = true
		}
	}
	fieldNames.Store(t, names)
	return names
}

var fieldNames sync.Map // reflect.Type -> map[string]bool
