package proxy

import (
	"bytes"
	"encoding/json"
	"errors"
)

// Documents as the views hold them: decoded with exact numbers and every
// upstream link rewritten to a placeholder for the public base (links.go),
// encoded without HTML escaping, and finished per request base.

// basePlaceholder stands for the public base URL inside parsed documents.
// It starts and ends with NUL, which JSON must escape, so the encoded form
// below cannot come from upstream text (NULs in upstream strings would be
// escaped the same way; rewrite strips the placeholder from them first).
const basePlaceholder = "\x00facade-public-base\x00"

var basePlaceholderJSON = []byte(`\u0000facade-public-base\u0000`)

// encodeJSON writes v without HTML escaping (the documents carry HTML in
// text members, and "\u003c" would only make them harder to read) and
// without the encoder's trailing newline.
func encodeJSON(buf *bytes.Buffer, v any) error {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	buf.Truncate(buf.Len() - 1)
	return nil
}

var errNotObject = errors.New("upstream document is not a JSON object")

// decodeJSON decodes a document keeping numbers exact (ids and sizes pass
// through as written).
func decodeJSON(body []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// publicBaseJSON returns base as it must appear inside a JSON string.
func publicBaseJSON(base string) []byte {
	var buf bytes.Buffer
	_ = encodeJSON(&buf, base) // a string always encodes
	b := buf.Bytes()
	return b[1 : len(b)-1]
}

// finish replaces the placeholder with the public base.
func finish(doc []byte, base string) []byte {
	return bytes.ReplaceAll(doc, basePlaceholderJSON, publicBaseJSON(base))
}
