package proxy

import (
	"net/url"
	"strings"

	"github.com/facade-dev/facade"
)

// Paging of both list endpoints (docs/contract.md §6).
const (
	defaultPage = 25
	// maxPage is the largest page a caller may ask for: a whole
	// organization's plans in a few requests.
	maxPage = 1000
	// maxStartIndex keeps start-index to nine digits: far beyond any
	// project count or build number, and no overflow anywhere.
	maxStartIndex = 999_999_999
)

// expandSet records, in a view key, which expansions a view holds; its
// zero value is "no expansion".
type expandSet uint8

// expandPlans: the project list's projects.project.plans.
const expandPlans expandSet = 1

// listParams is the paging of a list request (and, for the project list,
// whether plans are expanded). The zero value is not the default page;
// parseListParams fills defaults.
type listParams struct {
	expand     expandSet
	maxResults int // 1..maxPage
	startIndex int // 0..maxStartIndex
}

// parseListParams reads max-results (or Bamboo's alternative spelling
// max-result) and start-index from a raw query string. Every other
// parameter is left to parseRouteQuery or ignored: the upstream query is
// always built from parsed values, never from the caller's text.
//
// A paging parameter that is not 1-9 plain digits, is out of range, or is
// given twice with different values is a 400; so is a badly escaped value
// of a parameter we read.
func parseListParams(rawQuery string) (listParams, error) {
	p := listParams{maxResults: defaultPage}
	var maxSeen, startSeen string
	err := eachParam(rawQuery, isPagingParam, func(key, value string) (err error) {
		switch key {
		case "start-index":
			p.startIndex, startSeen, err = pagingValue(key, value, startSeen, 0, maxStartIndex)
		default:
			p.maxResults, maxSeen, err = pagingValue(key, value, maxSeen, 1, maxPage)
		}
		return err
	})
	return p, err
}

func isPagingParam(key string) bool {
	return key == "max-results" || key == "max-result" || key == "start-index"
}

// eachParam walks a raw query string in order and calls use with each
// parameter that want names, both unescaped. A garbled name is no
// parameter of ours and is skipped; a badly escaped value of a parameter
// we read is a 400. The first error use returns ends the walk.
func eachParam(rawQuery string, want func(key string) bool, use func(key, value string) error) error {
	for rawQuery != "" {
		var pair string
		pair, rawQuery, _ = strings.Cut(rawQuery, "&")
		rawKey, rawValue, _ := strings.Cut(pair, "=")
		key, ok := unescapeQuery(rawKey)
		if !ok || !want(key) {
			continue
		}
		value, ok := unescapeQuery(rawValue)
		if !ok {
			return badParameter(key, facade.ReasonMalformed)
		}
		if err := use(key, value); err != nil {
			return err
		}
	}
	return nil
}

func unescapeQuery(s string) (string, bool) {
	if !needsUnescape(s) {
		return s, true
	}
	u, err := url.QueryUnescape(s)
	return u, err == nil
}

// needsUnescape is strings.ContainsAny(s, "%+") without its set setup,
// which shows in profiles of the hot path.
func needsUnescape(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '%' || s[i] == '+' {
			return true
		}
	}
	return false
}

// pagingValue parses one occurrence of the paging parameter key. seen is
// the text of an earlier occurrence (of either spelling): repeating the
// same value is harmless, a different one is ambiguous (malformed).
func pagingValue(key, value, seen string, lo, hi int) (int, string, error) {
	if seen != "" && seen != value {
		return 0, seen, badParameter(key, facade.ReasonMalformed)
	}
	if len(value) < 1 || len(value) > 9 {
		return 0, seen, badParameter(key, facade.ReasonMalformed)
	}
	n := 0
	for i := 0; i < len(value); i++ {
		c := value[i]
		if c < '0' || c > '9' {
			return 0, seen, badParameter(key, facade.ReasonMalformed)
		}
		n = n*10 + int(c-'0')
	}
	if n < lo || n > hi {
		return 0, seen, badParameter(key, facade.ReasonOutOfRange)
	}
	return n, value, nil
}

// badParameter names the query parameter (as the client spelled it) and
// the rule it broke.
func badParameter(key string, reason facade.Reason) error {
	return facade.Refuse(facade.ErrBadParameter, key, reason)
}
