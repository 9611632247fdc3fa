package proxy

import (
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/facade-dev/facade"
)

// routeQuery is what a request to a build route asked for, validated. The
// upstream query is built from it (upstreamValues), never from the
// caller's text.
type routeQuery struct {
	listParams          // paging, and whether the project list's plans are expanded
	expand     []string // the route's supported expand values asked for, sorted
	filters    []filterValue
	// favourite: keep only the caller's favourite plans (?favourite).
	// Favourites are the person's, kept by the facade: never forwarded.
	favourite bool
	// clover: cloverEnabled=true, which the project and plan lists take
	// from a shared list fetched with it (projects.go).
	clover bool
}

type filterValue struct{ name, value string }

// filterRules validates each Bamboo result filter and says how it is
// forwarded; refused filters (favourite) have no rule.
var filterRules = map[string]struct {
	refused *facade.Error
	norm    func(string) (string, bool) // the value to forward ("" forwards nothing), or false
}{
	FilterLabel:            {facade.ErrFilterLabel, commaList(validLabel)},
	FilterIssueKey:         {facade.ErrFilterIssueKey, commaList(validIssueKey)},
	FilterBuildState:       {facade.ErrFilterBuildState, buildState},
	FilterIncludeAllStates: {facade.ErrFilterIncludeAllStates, boolFlag},
	FilterContinuable:      {facade.ErrFilterContinuable, boolFlag},
	FilterCloverEnabled:    {facade.ErrFilterCloverEnabled, boolFlag},
	FilterFavourite:        {facade.ErrFilterFavourite, boolFlag},
}

// parseRouteQuery reads paging (max-results or max-result, start-index),
// expand and the route's filters from a raw query, with url.ParseQuery.
// Every other parameter (showEmpty, os_authType, ...) is ignored. A Bamboo
// filter the route does not honour, or a malformed value of one it does,
// is a 400 that names the parameter; so is a badly escaped value of a
// parameter read here, a paging value that is not 1-9 plain digits or is
// out of range, and a paging parameter given twice with different values.
func parseRouteQuery(rawQuery string, rt *Route) (routeQuery, error) {
	// A ";" is text like any other in Bamboo's queries: escaped, ParseQuery
	// keeps it (in a value it then fails that value's own check) instead
	// of dropping its pair.
	vals, err := url.ParseQuery(strings.ReplaceAll(rawQuery, ";", "%3B"))
	if err != nil {
		if err := badlyEscaped(rawQuery); err != nil {
			return routeQuery{}, err
		}
	}
	q := routeQuery{}
	if q.listParams, err = listParamsOf(vals); err != nil {
		return routeQuery{}, err
	}
	q.expand = selectExpand(vals["expand"], rt.Expand)
	if q.has("projects.project.plans") {
		q.listParams.expand = expandPlans
	}
	var filters []string
	for name := range vals {
		if _, ok := filterRules[name]; ok {
			filters = append(filters, name)
		}
	}
	slices.Sort(filters) // the upstream query and the refusal do not depend on map order
	for _, name := range filters {
		rule := filterRules[name]
		if rule.norm == nil || !slices.Contains(rt.Filters, name) {
			return q, rule.refused
		}
		value, ok := rule.norm(strings.Join(vals[name], ","))
		if !ok {
			return q, rule.refused
		}
		switch {
		case name == FilterFavourite:
			q.favourite = value != ""
		case name == FilterCloverEnabled && rt.Cache == CacheProjectList:
			q.clover = value != ""
		case value != "":
			q.filters = append(q.filters, filterValue{name, value})
		}
	}
	return q, nil
}

// badlyEscaped names the parameter read here whose value url.ParseQuery
// could not unescape (it reports only the escape). A garbled name is no
// parameter of ours and is skipped.
func badlyEscaped(rawQuery string) error {
	for pair := range strings.SplitSeq(rawQuery, "&") {
		rawKey, rawValue, _ := strings.Cut(pair, "=")
		key, err := url.QueryUnescape(rawKey)
		if err != nil || !readHere(key) {
			continue
		}
		if _, err := url.QueryUnescape(rawValue); err != nil {
			return badParameter(key, facade.ReasonMalformed)
		}
	}
	return nil
}

func readHere(key string) bool {
	_, isFilter := filterRules[key]
	return isFilter || key == "expand" || key == "max-results" || key == "max-result" || key == "start-index"
}

// selectExpand keeps, from comma-joined expand values, the supported ones:
// a value equal to a supported one, or deeper below it (which selects the
// supported one: what lies below is never forwarded).
func selectExpand(values, supported []string) []string {
	var out []string
	for _, v := range values {
		for item := range strings.SplitSeq(v, ",") {
			item = strings.TrimSpace(item)
			best := ""
			for _, s := range supported {
				if (item == s || below(item, s)) && len(s) > len(best) {
					best = s
				}
			}
			if best != "" && !slices.Contains(out, best) {
				out = append(out, best)
			}
		}
	}
	slices.Sort(out)
	return out
}

// below reports whether item names something under s ("s.more").
func below(item, s string) bool {
	return len(item) > len(s) && item[len(s)] == '.' && item[:len(s)] == s
}

// withRecount adds the route's Recount lists to the expand values asked
// of upstream.
func (q routeQuery) withRecount(rt *Route) routeQuery {
	if len(rt.Recount) == 0 {
		return q
	}
	expand := slices.Clone(q.expand)
	for _, v := range rt.Recount {
		if !slices.Contains(expand, v) {
			expand = append(expand, v)
		}
	}
	slices.Sort(expand)
	q.expand = expand
	return q
}

// has reports whether expand value v was asked for.
func (q routeQuery) has(v string) bool { return slices.Contains(q.expand, v) }

// upstreamValues is the query sent upstream: expand, filters, and paging
// when paging is the upstream's.
func (q routeQuery) upstreamValues(withPaging bool) url.Values {
	v := url.Values{}
	if len(q.expand) > 0 {
		v.Set("expand", strings.Join(q.expand, ","))
	}
	for _, f := range q.filters {
		v.Set(f.name, f.value)
	}
	if withPaging {
		v.Set("max-results", strconv.Itoa(q.maxResults))
		if q.startIndex > 0 {
			v.Set("start-index", strconv.Itoa(q.startIndex))
		}
	}
	return v
}

// Filter value rules. A boolean filter is "true" or "false" (any case),
// or given bare ("?favourite&cloverEnabled"), which Bamboo documents and
// its clients send (atlassian-python-api) as true. Only true changes
// anything, so "false" forwards nothing.
func boolFlag(v string) (string, bool) {
	switch strings.ToLower(v) {
	case "true", "":
		return "true", true
	case "false":
		return "", true
	}
	return "", false
}

func buildState(v string) (string, bool) {
	for _, s := range []string{"Successful", "Failed", "Unknown"} {
		if strings.EqualFold(v, s) {
			return s, true
		}
	}
	return "", false
}

// maxFilterItems bounds a comma-separated filter list.
const maxFilterItems = 20

func commaList(valid func(string) bool) func(string) (string, bool) {
	return func(v string) (string, bool) {
		items := strings.Split(v, ",")
		if len(items) > maxFilterItems {
			return "", false
		}
		for i, item := range items {
			items[i] = strings.TrimSpace(item)
			if !valid(items[i]) {
				return "", false
			}
		}
		return strings.Join(items, ","), true
	}
}

// validLabel: Bamboo labels are words of letters, digits and . _ -.
func validLabel(s string) bool {
	if len(s) < 1 || len(s) > 255 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// validIssueKey: a Jira issue key, PROJECT-123.
func validIssueKey(s string) bool {
	project, number, ok := strings.Cut(s, "-")
	if !ok || len(project) > 64 || !facade.ValidBuildNumber(number) || project == "" || project[0] < 'A' || project[0] > 'Z' {
		return false
	}
	for i := 0; i < len(project); i++ {
		c := project[i]
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

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
