package proxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
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

// finished is doc made a view: the placeholders replaced with the public
// base, each favourite placeholder with false (its place noted for
// markFavourites), and tagged.
func finished(doc []byte, base string) view {
	body, marks := finish(doc, base)
	v := newView(body)
	v.marks = marks
	return v
}

// finish replaces the placeholders: the public base's with base, and each
// favourite placeholder with false, noting where.
func finish(doc []byte, base string) ([]byte, []favouriteMark) {
	doc = bytes.ReplaceAll(doc, basePlaceholderJSON, publicBaseJSON(base))
	if !bytes.Contains(doc, favouriteOpenJSON) {
		return doc, nil
	}
	out := make([]byte, 0, len(doc))
	var marks []favouriteMark
	for {
		i := bytes.Index(doc, favouriteOpenJSON)
		if i < 0 {
			return append(out, doc...), marks
		}
		rest := doc[i+len(favouriteOpenJSON):]
		end := bytes.Index(rest, favouriteCloseJSON)
		out = append(out, doc[:i]...)
		marks = append(marks, favouriteMark{at: len(out), plan: string(rest[:end])})
		out = append(out, "false"...)
		doc = rest[end+len(favouriteCloseJSON):]
	}
}

// favouritePlaceholder stands, in parsed documents, for the isFavourite
// of a plan object (links.go sets it): a JSON string that names the plan,
// which finish turns into false, noting where, so that a caller's own
// favourites are set per request by changing those bytes alone
// (markFavourites), without decoding the view. Like basePlaceholder it
// cannot come from upstream text: rewrite strips favouritePrefix from it.
type favouritePlaceholder string

const favouritePrefix = "\x00facade-favourite:"

var (
	favouriteOpenJSON  = []byte(`"\u0000facade-favourite:`)
	favouriteCloseJSON = []byte(`\u0000"`)
)

// MarshalJSON writes the placeholder: the plan key between the markers.
func (f favouritePlaceholder) MarshalJSON() ([]byte, error) {
	return append(append(slices.Clone(favouriteOpenJSON), f...), favouriteCloseJSON...), nil
}

// favouriteMark is where a view holds a plan object's isFavourite (false),
// and whose.
type favouriteMark struct {
	at   int
	plan string
}
