package upstream

import (
	"net/url"
	"slices"
	"strconv"
	"strings"

	facade "github.com/facade-dev/facade"
)

// ExpandProjectPlans is the expand value Projects forwards to Bamboo. Any
// other value given in a ProjectQuery is dropped: the upstream query only
// ever holds what this package wrote.
const ExpandProjectPlans = "projects.project.plans"

// ProjectQuery selects a page of GET /rest/api/latest/project. The zero
// value asks for Bamboo's default page (25 projects) without plans.
type ProjectQuery struct {
	Expand     []string // only ExpandProjectPlans is forwarded
	MaxResults int      // 0: omitted (Bamboo's default, 25)
	StartIndex int      // 0: omitted
	// CloverEnabled keeps the plans with Clover enabled (and their
	// projects), as Bamboo's cloverEnabled=true does.
	CloverEnabled bool
}

var projectExpands = []string{ExpandProjectPlans}

func (q ProjectQuery) values() url.Values {
	v := url.Values{}
	setExpand(v, q.Expand, projectExpands)
	setPositive(v, "max-results", q.MaxResults)
	setPositive(v, "start-index", q.StartIndex)
	if q.CloverEnabled {
		v.Set("cloverEnabled", "true")
	}
	return v
}

// setExpand writes the supported values of requested, sorted and without
// duplicates, as one comma-separated expand parameter.
func setExpand(v url.Values, requested, supported []string) {
	var kept []string
	for _, e := range requested {
		if slices.Contains(supported, e) && !slices.Contains(kept, e) {
			kept = append(kept, e)
		}
	}
	if len(kept) > 0 {
		slices.Sort(kept)
		v.Set("expand", strings.Join(kept, ","))
	}
}

func setPositive(v url.Values, name string, n int) {
	if n > 0 {
		v.Set(name, strconv.Itoa(n))
	}
}

// projectsURL is {base}/rest/api/latest/project.json?{query}.
func (c *Client) projectsURL(q ProjectQuery) string {
	return c.base + "/rest/api/latest/project.json" + encodeQuery(q.values())
}

// artifactURL is {base}{path} with every segment of path escaped. path must
// be an absolute, unescaped path under /browse/ or /download/ (the two
// places Bamboo serves artifacts and logs from) with no empty, "." or ".."
// segment and none of ? # \ % or control characters, so that it can never
// reach another upstream resource.
func (c *Client) artifactURL(path string) (string, error) {
	if !strings.HasPrefix(path, "/browse/") && !strings.HasPrefix(path, "/download/") {
		return "", facade.ErrBadIdentifier
	}
	segments := strings.Split(path[1:], "/")
	for i, seg := range segments {
		last := i == len(segments)-1
		if !validSegment(seg, last) {
			return "", facade.ErrBadIdentifier
		}
		segments[i] = url.PathEscape(seg)
	}
	return c.base + "/" + strings.Join(segments, "/"), nil
}

// validSegment reports whether seg may appear in an artifact path. Only the
// last segment may be empty (a trailing slash: Bamboo's directory links).
func validSegment(seg string, last bool) bool {
	if seg == "" {
		return last
	}
	if seg == "." || seg == ".." {
		return false
	}
	for _, r := range seg {
		if r < 0x20 || r == 0x7f || strings.ContainsRune(`?#\%`, r) {
			return false
		}
	}
	return true
}
