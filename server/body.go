package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strings"
	"sync"

	"github.com/labstack/echo/v4"

	"github.com/facade-dev/facade"
)

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

// decodeObject decodes body into *struct dst in one pass: one JSON object
// whose keys are json tag names of dst's fields, exactly (encoding/json
// alone would take "GRADE" for "grade") and each at most once (it would
// keep the last), each value of its field's type, and nothing after the
// object but white space (400 malformed-body otherwise).
func decodeObject(body []byte, dst any) error {
	fields := jsonFields(reflect.TypeOf(dst).Elem())
	v := reflect.ValueOf(dst).Elem()
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	bad := facade.ErrMalformedBody
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return bad
	}
	seen := make(map[string]bool, len(fields))
	for dec.More() {
		t, err := dec.Token()
		key, ok := t.(string)
		field, known := fields[key]
		if err != nil || !ok || !known || seen[key] {
			return bad
		}
		seen[key] = true
		if err := dec.Decode(v.Field(field).Addr().Interface()); err != nil {
			return facade.Wrap(bad, err)
		}
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return bad
	}
	if dec.InputOffset() != int64(len(bytes.TrimRight(body, " \t\r\n"))) {
		return bad
	}
	return nil
}

// jsonFields maps the json names of struct t's fields to their indexes,
// worked out once per type.
func jsonFields(t reflect.Type) map[string]int {
	if fields, ok := fieldIndexes.Load(t); ok {
		return fields.(map[string]int)
	}
	fields := map[string]int{}
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
			fields[name] = i
		}
	}
	fieldIndexes.Store(t, fields)
	return fields
}

var fieldIndexes sync.Map // reflect.Type -> map[string]int
