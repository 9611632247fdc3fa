package proxy

import (
	"net/url"
	"strings"

	"github.com/facade-dev/facade"
)

// Paging of both list endpoints (SPEC section 6).
const (
	defaultPage = 25
	maxPage     = 100
	// maxStartIndex keeps start-index to nine digits: far beyond any
	// project count or build number, and no overflow anywhere.
	maxStartIndex = 999_999_999
)

// expandSet is the set of supported expansions a request asked for, as
// bits; its zero value is "no expansion".
type expandSet uint8

const (
	expandPlans     expandSet = 1 << iota // projects.project.plans
	expandResult                          // results.result
	expandArtifacts                       // results.result.artifacts (implies expandResult)
)

// expandRule maps an expand path to the expansion it selects.
type expandRule struct {
	path string
	set  expandSet
}

// Expand paths understood per endpoint, most specific first. As in Bamboo,
// a deeper path expands everything above it: "projects.project.plans.plan"
// or "...plans.plan.stages" expand the plans, "results.result.labels" the
// results. What lies below a supported path is ignored, never forwarded.
var (
	projectExpands = []expandRule{
		{"projects.project.plans", expandPlans},
	}
	resultExpands = []expandRule{
		{"results.result.artifacts", expandArtifacts},
		{"results.result", expandResult},
	}
)

// listParams is what a list request may ask for. The zero value is not
// the default page; parseListParams fills defaults.
type listParams struct {
	expand     expandSet
	maxResults int // 1..maxPage
	startIndex int // 0..maxStartIndex
}

// parseListParams reads expand, max-results (or Bamboo's alternative
// spelling max-result) and start-index from a raw query string. Every
// other parameter (showEmpty, os_authType, ...) is ignored: the upstream
// query is always built from listParams, never from the caller's text.
//
// A paging parameter that is not 1-9 plain digits, is out of range, or is
// given twice with different values is a 400; so is a badly escaped value
// of a parameter we read.
func parseListParams(rawQuery string, supported []expandRule) (listParams, error) {
	p := listParams{maxResults: defaultPage}
	var maxSeen, startSeen string
	for rawQuery != "" {
		var pair string
		pair, rawQuery, _ = strings.Cut(rawQuery, "&")
		rawKey, rawValue, _ := strings.Cut(pair, "=")
		key, ok := unescapeQuery(rawKey)
		if !ok {
			continue // a garbled name is no parameter of ours
		}
		switch key {
		case "expand", "max-results", "max-result", "start-index":
		default:
			continue
		}
		value, ok := unescapeQuery(rawValue)
		if !ok {
			return p, badParameter()
		}
		var err error
		switch key {
		case "expand":
			p.expand |= parseExpand(value, supported)
		case "start-index":
			p.startIndex, startSeen, err = pagingValue(value, startSeen, 0, maxStartIndex)
		default:
			p.maxResults, maxSeen, err = pagingValue(value, maxSeen, 1, maxPage)
		}
		if err != nil {
			return p, err
		}
	}
	if p.expand&expandArtifacts != 0 {
		p.expand &^= expandResult // implied; one cache key for both spellings
	}
	return p, nil
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

// parseExpand accepts a comma-joined list (Bamboo's form) and keeps the
// supported values.
func parseExpand(value string, supported []expandRule) expandSet {
	var set expandSet
	for value != "" {
		var item string
		item, value, _ = strings.Cut(value, ",")
		item = strings.TrimSpace(item)
		for _, rule := range supported {
			if rest, ok := strings.CutPrefix(item, rule.path); ok && (rest == "" || rest[0] == '.') {
				set |= rule.set
				break
			}
		}
	}
	return set
}

// pagingValue parses one occurrence of a paging parameter. seen is the
// text of an earlier occurrence (of either spelling): repeating the same
// value is harmless, a different one is ambiguous.
func pagingValue(value, seen string, lo, hi int) (int, string, error) {
	if seen != "" && seen != value {
		return 0, seen, badParameter()
	}
	if len(value) < 1 || len(value) > 9 {
		return 0, seen, badParameter()
	}
	n := 0
	for i := 0; i < len(value); i++ {
		c := value[i]
		if c < '0' || c > '9' {
			return 0, seen, badParameter()
		}
		n = n*10 + int(c-'0')
	}
	if n < lo || n > hi {
		return 0, seen, badParameter()
	}
	return n, value, nil
}

func badParameter() error { return facade.Errorf(facade.EINVALID, facade.DetailBadParameter) }
