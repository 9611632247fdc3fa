package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"regexp"

	"github.com/labstack/echo/v4"

	"github.com/facade-dev/facade"
)

// Identifier formats of SPEC section 3. Anything else is 400 before any
// look-up; the patterns admit no '/', '%', '?' or '#', so nothing encoded
// reaches a Redis key or an upstream URL.
var (
	studentIDPattern = regexp.MustCompile(`^[A-Za-z0-9._@-]{1,64}$`)
	accountIDPattern = studentIDPattern
)

var errBadIdentifier = facade.Errorf(facade.EINVALID, facade.DetailBadIdentifier)

// pathID returns the named path parameter when it matches pattern.
func pathID(c echo.Context, name string, pattern *regexp.Regexp) (string, error) {
	v := c.Param(name)
	if !pattern.MatchString(v) {
		return "", errBadIdentifier
	}
	return v, nil
}

// decodeJSON reads a JSON body into dst strictly: application/json only
// (415), at most 16 KiB (413), no unknown fields and nothing after the
// value (400). Identifiers never come from the body.
func decodeJSON(c echo.Context, dst any) error {
	mt, _, err := mime.ParseMediaType(c.Request().Header.Get(echo.HeaderContentType))
	if err != nil || mt != echo.MIMEApplicationJSON {
		return &echo.HTTPError{Code: http.StatusUnsupportedMediaType}
	}
	body, err := io.ReadAll(c.Request().Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return &echo.HTTPError{Code: http.StatusRequestEntityTooLarge}
		}
		return facade.Wrap(facade.EINVALID, facade.DetailMalformedBody, err)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return facade.Wrap(facade.EINVALID, facade.DetailMalformedBody, err)
	}
	if dec.More() || dec.InputOffset() != int64(len(bytes.TrimRight(body, " \t\r\n"))) {
		return facade.Errorf(facade.EINVALID, facade.DetailMalformedBody)
	}
	return nil
}
