package server

import (
	"mime"
	"net/http"
	"strconv"
	"strings"
)

// accepted is a request's Accept header read once: the media ranges it
// lists, in order, each with its q (1 when not given). Every answer that
// depends on Accept asks it (docs/contract.md §2): the JSON routes' 406,
// a class's and a statement's CSV, the root's and the sign-in callback's
// page for a browser.
type accepted struct {
	ranges []mediaRange
	// given: the header has a value that is not blank, even one whose
	// ranges all failed to parse (which then accepts nothing).
	given bool
}

// mediaRange is one element of Accept: "text/csv", "application/*" or
// "*/*", lower-cased, and its weight.
type mediaRange struct {
	mediaType string
	q         float64
}

// acceptOf reads r's Accept header(s).
func acceptOf(r *http.Request) accepted { return parseAccept(r.Header.Values("Accept")) }

// parseAccept reads Accept values. A range that does not parse, or whose
// q is not a number, is left out, as if the client had not sent it.
func parseAccept(values []string) accepted {
	var a accepted
	for _, v := range values {
		if strings.TrimSpace(v) != "" {
			a.given = true
		}
		for _, part := range strings.Split(v, ",") {
			if r, ok := parseMediaRange(strings.TrimSpace(part)); ok {
				a.ranges = append(a.ranges, r)
			}
		}
	}
	return a
}

func parseMediaRange(part string) (mediaRange, bool) {
	mt, params, err := mime.ParseMediaType(part)
	if err != nil {
		return mediaRange{}, false
	}
	r := mediaRange{mediaType: mt, q: 1}
	if qs, ok := params["q"]; ok {
		if r.q, err = strconv.ParseFloat(qs, 64); err != nil {
			return mediaRange{}, false
		}
	}
	return r, true
}

// asksFor reports whether the header names mediaType itself with a q
// above 0: a browser's navigation names text/html, a spreadsheet download
// text/csv. A wildcard does not count, so curl's */* still gets JSON.
func (a accepted) asksFor(mediaType string) bool {
	for _, r := range a.ranges {
		if r.mediaType == mediaType && r.q > 0 {
			return true
		}
	}
	return false
}

// admitsJSON reports whether a JSON answer (application/json, or
// application/problem+json for an error) is acceptable: the most specific
// range that covers it decides, and among equally specific ones the
// highest q (RFC 9110 §12.5.1: "application/json;q=0, */*" excludes JSON).
// No header accepts anything; a header none of whose ranges covers JSON
// accepts no JSON (406).
func (a accepted) admitsJSON() bool {
	best, bestQ := 0, 1.0
	for _, r := range a.ranges {
		spec := jsonSpecificity(r.mediaType)
		if spec == 0 || spec < best {
			continue
		}
		if spec > best || r.q > bestQ {
			best, bestQ = spec, r.q
		}
	}
	if best == 0 {
		return !a.given
	}
	return bestQ > 0
}

// jsonSpecificity ranks how precisely a media range names JSON: 0 when it
// does not cover application/json at all.
func jsonSpecificity(mediaType string) int {
	switch mediaType {
	case "application/json", "application/problem+json":
		return 3
	case "application/*":
		return 2
	case "*/*":
		return 1
	}
	return 0
}
