package proxy

import (
	"net/url"
	"strconv"
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
// listParamsOf fills defaults.
type listParams struct {
	expand     expandSet
	maxResults int // 1..maxPage
	startIndex int // 0..maxStartIndex
}

// listParamsOf reads the paging of a list request: max-results (or
// Bamboo's alternative spelling max-result) and start-index. The upstream
// query is always built from these values, never from the caller's text.
func listParamsOf(vals url.Values) (listParams, error) {
	p := listParams{maxResults: defaultPage}
	var err error
	if p.maxResults, err = pagingValue(vals, 1, maxPage, defaultPage, "max-results", "max-result"); err != nil {
		return p, err
	}
	p.startIndex, err = pagingValue(vals, 0, maxStartIndex, 0, "start-index")
	return p, err
}

// pagingValue is the value of the paging parameter spelled names, or def
// when none is given. Repeating the same value is harmless; a different
// one is ambiguous (malformed), as is anything but 1-9 plain digits (no
// sign: strconv alone would take "+5").
func pagingValue(vals url.Values, lo, hi, def int, names ...string) (int, error) {
	first, name := "", ""
	for _, n := range names {
		for _, v := range vals[n] {
			switch {
			case name == "":
				first, name = v, n
			case v != first:
				return 0, badParameter(n, facade.ReasonMalformed)
			}
		}
	}
	if name == "" {
		return def, nil
	}
	if len(first) < 1 || len(first) > 9 || strings.Trim(first, "0123456789") != "" {
		return 0, badParameter(name, facade.ReasonMalformed)
	}
	n, _ := strconv.Atoi(first) // nine digits always fit
	if n < lo || n > hi {
		return 0, badParameter(name, facade.ReasonOutOfRange)
	}
	return n, nil
}

// badParameter names the query parameter (as the client spelled it) and
// the rule it broke.
func badParameter(key string, reason facade.Reason) error {
	return facade.Refuse(facade.ErrBadParameter, key, reason)
}
