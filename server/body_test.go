package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/facade-dev/facade"
)

// everyKind is a body with a field of each kind encoding/json decodes, so
// the one-pass decoder is held to the former one beyond the routes'
// single *string fields.
type everyKind struct {
	S    string            `json:"s"`
	P    *string           `json:"p"`
	N    int               `json:"n"`
	F    float64           `json:"f,omitempty"`
	B    bool              `json:"b"`
	L    []string          `json:"l"`
	M    map[string]int    `json:"m"`
	In   struct{ X int }   `json:"in"`
	Raw  json.RawMessage   `json:"raw"`
	Skip string            `json:"-"`
	Any  any               `json:"any"`
	Tags map[string]string `json:"tags"`
}

// TestDecodeObjectRefusals: what a JSON body may be, and the 400 for what
// it may not (docs/contract.md §2).
func TestDecodeObjectRefusals(t *testing.T) {
	for _, tc := range []struct {
		body string
		ok   bool
	}{
		{`{"grade":"B+"}`, true},
		{` {"grade":"B+"} ` + "\r\n", true},
		{`{}`, true},
		{`{"grade":null}`, true},
		{``, false},
		{`null`, false},
		{`[]`, false},
		{`"grade"`, false},
		{`{"Grade":"B+"}`, false},
		{`{"grade":"B+","grade":"A"}`, false},
		{`{"grade":"B+","note":"x"}`, false},
		{`{"grade":5}`, false},
		{`{"grade":"B+"`, false},
		{`{"grade":"B+"}{}`, false},
		{`{"grade":"B+"}]`, false},
		{`{"grade":"B+"} x`, false},
	} {
		var b gradeBody
		err := decodeObject([]byte(tc.body), &b)
		if tc.ok != (err == nil) || (err != nil && !errors.Is(err, facade.ErrMalformedBody)) {
			t.Errorf("%q: %v", tc.body, err)
		}
	}
}

// FuzzDecodeObjectAgreesWithTheFormerDecoder: for any body, decoding in
// one pass refuses what the former two passes (a key check, then
// encoding/json; kept below as the oracle) refused, and fills the same
// values otherwise.
func FuzzDecodeObjectAgreesWithTheFormerDecoder(f *testing.F) {
	for _, s := range []string{`{"grade":"B+"}`, `{"reference":"Rent"}`, `{"s":"x","p":null,"n":1,"f":1.5,"b":true}`,
		`{"l":["a"],"m":{"a":1},"in":{"X":2},"raw":[1,{}],"any":{"k":[null]},"tags":{}}`, `{"in":{"x":1,"Y":2}}`,
		`{"n":1e3}`, `{"s":"\ud800"}`, `{"grade":"B+"} `, `{"a":1,"a":2}`, `{"F":1}`, `{"Skip":"x"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		agree(t, body, &gradeBody{}, &gradeBody{})
		agree(t, body, &transferBody{}, &transferBody{})
		agree(t, body, &everyKind{}, &everyKind{})
	})
}

func agree[T any](t *testing.T, body []byte, got, want *T) {
	errGot, errWant := decodeObject(body, got), formerDecode(body, want)
	if (errGot == nil) != (errWant == nil) || facade.CodeOf(errGot) != facade.CodeOf(errWant) {
		t.Fatalf("%q into %T: %v, before %v", body, got, errGot, errWant)
	}
	if errGot == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%q into %T: %+v, before %+v", body, got, *got, *want)
	}
}

// formerDecode is how a JSON body was decoded before (checkObjectKeys,
// then encoding/json over the whole body), kept as the fuzz target's
// oracle.
func formerDecode(body []byte, dst any) error {
	allowed := map[string]bool{}
	t := reflect.TypeOf(dst).Elem()
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
			allowed[name] = true
		}
	}
	keys := json.NewDecoder(bytes.NewReader(body))
	if tok, err := keys.Token(); err != nil || tok != json.Delim('{') {
		return facade.ErrMalformedBody
	}
	seen := map[string]bool{}
	for keys.More() {
		tok, err := keys.Token()
		key, ok := tok.(string)
		if err != nil || !ok || !allowed[key] || seen[key] {
			return facade.ErrMalformedBody
		}
		seen[key] = true
		var skip json.RawMessage
		if err := keys.Decode(&skip); err != nil {
			return facade.ErrMalformedBody
		}
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
