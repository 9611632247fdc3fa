package upstream

import (
	"net/http"
	"strconv"
	"strings"
)

// Range is the part of an artifact a client asked for: one byte range of
// RFC 9110 §14.1.2 ("bytes=0-99", "bytes=100-", "bytes=-100"), and the
// If-Range condition that goes with it. The zero Range asks for the whole
// file.
type Range struct {
	Bytes   string // "0-99", "100-" or "-100"; "" for the whole file
	IfRange string // an entity tag or an HTTP date; "" when unconditional
}

// maxRangeHeader bounds a Range header this service reads: one byte range
// of two int64 needs 46 bytes.
const maxRangeHeader = 64

// ParseRange reads a client's Range and If-Range headers. Only one
// well-formed byte range passes, with an If-Range that is a strong entity
// tag or an HTTP date; anything else gives the zero Range, so that the
// whole file is answered with 200, as RFC 9110 §14.2 allows a server to do
// (and as nginx does): a range in another unit, several ranges (net/http
// and Bamboo's servlet would answer multipart/byteranges, which download
// tools do not ask for), a malformed header, or an If-Range that cannot
// match (a weak tag never matches, §13.1.5). Nothing else reaches Bamboo.
func ParseRange(rangeHeader, ifRange string) Range {
	spec, ok := strings.CutPrefix(rangeHeader, "bytes=")
	if !ok || len(rangeHeader) > maxRangeHeader {
		return Range{}
	}
	spec = strings.Trim(spec, " \t")
	first, last, ok := strings.Cut(spec, "-")
	if !ok || !byteRange(first, last) {
		return Range{}
	}
	if ifRange != "" && !strongETag(ifRange) && !httpDate(ifRange) {
		return Range{}
	}
	return Range{Bytes: spec, IfRange: ifRange}
}

// byteRange checks first-last, first- or -suffix: decimal digits fitting
// int64, first <= last, a suffix above 0.
func byteRange(first, last string) bool {
	f, ferr := digits(first)
	l, lerr := digits(last)
	switch {
	case first == "":
		return lerr == nil && l > 0
	case last == "":
		return ferr == nil
	}
	return ferr == nil && lerr == nil && f <= l
}

// digits parses a non-empty run of ASCII digits (no sign, no spaces).
func digits(s string) (int64, error) {
	if s == "" || strings.Trim(s, "0123456789") != "" {
		return 0, strconv.ErrSyntax
	}
	return strconv.ParseInt(s, 10, 64)
}

// strongETag reports an entity tag without W/: a quoted run of etagc
// (RFC 9110 §8.8.3: %x21 / %x23-7E / obs-text, never a quote).
func strongETag(s string) bool {
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		if c := s[i]; c == '"' || c < 0x21 || c == 0x7f {
			return false
		}
	}
	return true
}

func etag(s string) bool {
	return strongETag(strings.TrimPrefix(s, "W/"))
}

// httpDate reports a date in one of the three forms HTTP allows.
func httpDate(s string) bool {
	_, err := http.ParseTime(s)
	return err == nil
}

// contentRange checks an upstream Content-Range: "bytes first-last/size"
// (size may be "*") on a 206, "bytes */size" on a 416.
func contentRange(s string, status int) bool {
	spec, ok := strings.CutPrefix(s, "bytes ")
	if !ok {
		return false
	}
	span, size, ok := strings.Cut(spec, "/")
	if !ok {
		return false
	}
	n, err := digits(size)
	if status == http.StatusRequestedRangeNotSatisfiable {
		return span == "*" && err == nil
	}
	first, last, ok := strings.Cut(span, "-")
	f, ferr := digits(first)
	l, lerr := digits(last)
	if !ok || ferr != nil || lerr != nil || f > l {
		return false
	}
	return size == "*" || err == nil && l < n
}
