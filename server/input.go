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
	"github.com/facade-dev/facade/server/problem"
)

// errBadIdentifier is the 400 for an identifier outside docs/contract.md §3's
// formats (facade.ValidID and friends), given before any look-up.
var errBadIdentifier = facade.ErrBadIdentifier

// pathID returns the named path parameter, percent-decoded, when valid
// says it is well-formed. Echo hands over the raw segment: an encoded '/',
// '.', '?', '#' or '%' is refused outright (it must never turn into a key or
// a path); anything else encoded (%40 for '@', as encodeURIComponent
// writes it) is decoded and then held to the same format.
func pathID(c echo.Context, name string, valid func(string) bool) (string, error) {
	v := c.Param(name)
	if strings.Contains(v, "%") {
		if forbiddenEscapes.MatchString(v) {
			return "", errBadIdentifier
		}
		decoded, err := url.PathUnescape(v)
		if err != nil {
			return "", errBadIdentifier
		}
		v = decoded
	}
	if !valid(v) {
		return "", errBadIdentifier
	}
	return v, nil
}

var forbiddenEscapes = regexp.MustCompile(`(?i)%(2f|2e|3f|23|25)`)

// decodeJSON reads a JSON body into dst strictly: application/json only
// (415), at most 16 KiB (413), no unknown fields and nothing after the
// value (400). Identifiers never come from the body.
func decodeJSON(c echo.Context, dst any) error {
	mt, _, err := mime.ParseMediaType(c.Request().Header.Get(echo.HeaderContentType))
	if err != nil || mt != echo.MIMEApplicationJSON {
		return problem.UnsupportedMedia
	}
	body, err := io.ReadAll(c.Request().Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return problem.BodyTooLarge
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
