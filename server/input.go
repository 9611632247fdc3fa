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
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/facade-dev/facade"
)

// A request's input is read here and nowhere else, once, at the edge
// (docs/contract.md §2, input validation before authorization): the
// identifiers in its path, parsed into their types, and its body.

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

// Request bodies are read here and nowhere else: a grade's and a
// transfer's JSON, a gradebook's CSV. Their size is capped by the route
// (limitBodyTo); these functions give the refusals' codes: 415 for
// another Content-Type, 413 past the cap, 400 malformed-body for a body
// that breaks off or is not what the route takes (docs/contract.md §2).

// requireContentType answers 415 unless the request's Content-Type is
// want (parameters such as charset aside).
func requireContentType(r *http.Request, want string) error {
	mt, _, err := mime.ParseMediaType(r.Header.Get(echo.HeaderContentType))
	if err != nil || mt != want {
		return facade.ErrUnsupportedMedia
	}
	return nil
}

// requestBody is r's body with the service's read errors (bodyErrors).
func requestBody(r *http.Request) io.Reader { return bodyErrors{r.Body} }

// readBody reads r's whole body (a JSON body, at most 16 KiB).
func readBody(r *http.Request) ([]byte, error) { return io.ReadAll(requestBody(r)) }

// bodyErrors turns a request body's read errors into the service's: 413
// past the route's cap, a malformed body when the client breaks off.
type bodyErrors struct{ r io.Reader }

func (b bodyErrors) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err == nil || err == io.EOF {
		return n, err
	}
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return n, facade.ErrBodyTooLarge
	}
	return n, facade.Wrap(facade.ErrMalformedBody, err)
}

// csvBody returns a text/csv body to read as it streams (415 for another
// type).
func csvBody(r *http.Request) (io.Reader, error) {
	if err := requireContentType(r, "text/csv"); err != nil {
		return nil, err
	}
	return requestBody(r), nil
}

// decodeJSON reads a JSON body into dst strictly: application/json only
// (415), at most the route's cap (413), then as decodeObject says (400).
// Identifiers never come from the body.
func decodeJSON(r *http.Request, dst any) error {
	if err := requireContentType(r, echo.MIMEApplicationJSON); err != nil {
		return err
	}
	body, err := readBody(r)
	if err != nil {
		return err
	}
	return decodeObject(body, dst)
}

// decodeObject decodes body, one JSON object, into *struct dst with
// encoding/json: DisallowUnknownFields refuses a member dst has no field
// for, and nothing but white space may follow the object. encoding/json
// alone would also take a member named in another case ("GRADE" for
// "grade") and keep the last of a repeated member, two readings of one
// body that another parser may not share: the service refuses both
// (TestJSONKeysAreExact), so exactMembers checks the names first. Any
// refusal is 400 malformed-body (docs/contract.md §2: input validation).
func decodeObject(body []byte, dst any) error {
	if err := exactMembers(body, dst); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return facade.Wrap(facade.ErrMalformedBody, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return facade.ErrMalformedBody // something after the object
	}
	return nil
}

// exactMembers refuses body unless it is an object each of whose members
// is named exactly as one of *struct dst's fields is tagged, and at most
// once. The values are checked by the decode that follows.
func exactMembers(body []byte, dst any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return facade.ErrMalformedBody
	}
	fields := reflect.TypeOf(dst).Elem()
	var seen []string
	for dec.More() {
		t, err := dec.Token()
		name, _ := t.(string)
		if err != nil || slices.Contains(seen, name) || !hasJSONName(fields, name) {
			return facade.ErrMalformedBody
		}
		seen = append(seen, name)
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return facade.Wrap(facade.ErrMalformedBody, err)
		}
	}
	return nil
}

// hasJSONName reports whether a field of struct t is tagged with name.
func hasJSONName(t reflect.Type, name string) bool {
	for i := range t.NumField() {
		if tag, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); tag == name && tag != "-" {
			return true
		}
	}
	return false
}
