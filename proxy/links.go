package proxy

import (
	"html"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/facade-dev/facade"
)

// Link rewriting. Bamboo writes absolute URLs of itself into its documents:
// every link.href, and HTML in free-text members such as buildReason
// ("Manual run by <a href=\"https://bamboo.example.com/browse/user/x\">").
// No upstream host may reach a client, so every string of a document is
// rewritten, not just the members we model.
//
// Which prefixes are "upstream" is learnt from the document itself: the
// scheme, host and context path of every link.href (a link always points at
// Bamboo, and Bamboo may know itself under several names, as sample 08
// shows). The part after the context path is kept, so
// http://bamboo:8085/ctx/browse/K-P-7/artifact/... becomes
// {public}/browse/K-P-7/artifact/..., the facade's own artifact route.
//
// The public base differs per request when FACADE_PUBLIC_URL is unset, so
// a parsed document holds a placeholder where the base goes, and a view is
// finished with one bytes.ReplaceAll.

// bambooRoots are the first path segments of Bamboo's own pages and API;
// what comes before the first of them in a link is the context path.
var bambooRoots = []string{"/rest/", "/browse/", "/download/", "/build/", "/chain/", "/deploy/", "/artifact/", "/plugins/", "/userlogin", "/start.action"}

// rewriter replaces upstream URL prefixes with the placeholder.
type rewriter struct {
	prefixes []string // longest first
}

// newRewriter learns the upstream prefixes from every link.href in doc.
func newRewriter(doc any) *rewriter {
	seen := map[string]bool{}
	walkLinks(doc, func(link map[string]any) {
		if href, ok := link["href"].(string); ok {
			for _, p := range upstreamPrefixes(href) {
				seen[p] = true
			}
		}
	})
	r := &rewriter{}
	for p := range seen {
		r.prefixes = append(r.prefixes, p)
	}
	// Longest first, so a context path goes before its bare origin; then
	// by text, so the result does not depend on map order.
	slices.SortFunc(r.prefixes, func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})
	return r
}

// upstreamPrefixes returns, for an absolute http(s) URL, its origin plus
// context path and its bare origin, each under both schemes (Bamboo's
// configured base URL and the way a page links to it need not agree).
func upstreamPrefixes(href string) []string {
	u, err := url.Parse(href)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil
	}
	hostPart := "//" + u.Host
	path := u.EscapedPath()
	first := -1
	for _, root := range bambooRoots {
		if i := strings.Index(path, root); i >= 0 && (first < 0 || i < first) {
			first = i
		}
	}
	context := ""
	if first > 0 {
		context = path[:first]
	}
	var out []string
	for _, scheme := range []string{"http:", "https:"} {
		out = append(out, scheme+hostPart)
		if context != "" {
			out = append(out, scheme+hostPart+context)
		}
	}
	return out
}

// rewrite returns s with every upstream prefix replaced by the placeholder.
// A prefix only matches where it ends at a URL boundary, so
// http://bamboo.example.com does not eat into http://bamboo.example.community.
func (r *rewriter) rewrite(s string) string {
	s = strings.ReplaceAll(strings.ReplaceAll(s, basePlaceholder, ""), favouritePrefix, "")
	for _, p := range r.prefixes {
		if !strings.Contains(s, p) {
			continue
		}
		var b strings.Builder
		for {
			i := strings.Index(s, p)
			if i < 0 {
				break
			}
			end := i + len(p)
			b.WriteString(s[:i])
			if end == len(s) || isURLBoundary(s[end]) {
				b.WriteString(basePlaceholder)
			} else {
				b.WriteString(p)
			}
			s = s[end:]
		}
		b.WriteString(s)
		s = b.String()
	}
	return s
}

func isURLBoundary(c byte) bool {
	return strings.IndexByte("/?#\"'<> \t\r\n&)", c) >= 0
}

// rewriteTree rewrites every string (member names included) of a decoded
// JSON value in place and turns artifactUrlRedirect links into facade
// artifact URLs. It returns the rewritten value.
func (r *rewriter) rewriteTree(v any) any {
	switch t := v.(type) {
	case string:
		return unlinkUnserved(r.rewrite(t))
	case []any:
		for i := range t {
			t[i] = r.rewriteTree(t[i])
		}
		return t
	case map[string]any:
		var renamed map[string]any
		for k, val := range t {
			val = r.rewriteTree(val)
			if nk := r.rewrite(k); nk != k {
				if renamed == nil {
					renamed = map[string]any{}
				}
				renamed[nk] = val
				delete(t, k)
				continue
			}
			t[k] = val
		}
		for k, val := range renamed {
			t[k] = val
		}
		if _, ok := t["isFavourite"]; ok {
			// Upstream's favourites are the service account's, not the
			// caller's: every view holds false, and the caller's own are
			// set per request (favourites.go) where the placeholder was.
			t["isFavourite"] = false
			if key, _ := t["key"].(string); key != "" {
				if _, err := facade.ParsePlanKey(key); err == nil {
					t["isFavourite"] = favouritePlaceholder(key)
				}
			}
		}
		for _, k := range urlMembers {
			if u, ok := t[k].(string); ok && !safeScheme(u) {
				delete(t, k)
			}
		}
		if link, ok := t["link"].(map[string]any); ok {
			if href, ok := link["href"].(string); ok {
				link["href"] = artifactRedirectToRoute(href)
			}
		}
		return t
	}
	return v
}

// HTML in text members. Bamboo's buildReason and reasonSummary are HTML
// with anchors to its own pages ("Manual run by <a href=\"{bamboo}/browse/
// user/x\">X</a>"). The facade serves none of Bamboo's pages, only the
// paths of its route table, so an anchor that leads to the upstream (its
// href now starts with the placeholder) or is host-relative, and whose
// path the route table does not serve, is replaced by its text: the
// facade hands out no link it does not serve. An anchor to another host
// (a Jira, a repository browser) is left as it is.
var (
	htmlAnchor     = regexp.MustCompile(`(?is)<a\b([^>]*)>(.*?)</a\s*>`)
	htmlAnchorOpen = regexp.MustCompile(`(?is)<a\b([^>]*)>`) // an anchor never closed
	htmlHref       = regexp.MustCompile(`(?is)\bhref\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))`)
)

// urlMembers are the members that hold a URL in Bamboo's documents
// (link.href, a Jira issue's url.href); one whose scheme is not http(s)
// is removed.
var urlMembers = []string{"href", "url"}

// safeScheme reports whether a URL is http(s) or has no scheme (relative).
// Browsers ignore tabs and newlines inside a scheme and spaces and
// controls before it ("java\tscript:", " javascript:"), so those are
// dropped before the scheme is read.
func safeScheme(u string) bool {
	u = strings.Map(func(r rune) rune {
		if r <= ' ' || r == 0x7f {
			return -1
		}
		return r
	}, u)
	colon := strings.IndexByte(u, ':')
	if colon < 0 {
		return true
	}
	if i := strings.IndexAny(u, "/?#"); i >= 0 && i < colon {
		return true // a relative path with a colon further on
	}
	scheme := strings.ToLower(u[:colon])
	return scheme == "http" || scheme == "https"
}

// htmlURLAttr is an attribute of an HTML tag that holds a URL a browser
// would follow or load.
var htmlURLAttr = regexp.MustCompile(`(?is)\s(?:href|src|action|formaction|xlink:href|data|poster|background)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))`)

// unlinkUnserved replaces each anchor of s that leads to a path the
// facade does not serve, or to a scheme other than http(s), with the
// anchor's text, and removes every other URL attribute of another scheme
// (an <img src="javascript:...">).
func unlinkUnserved(s string) string {
	if !strings.Contains(s, "<") {
		return s
	}
	// Until nothing changes: removing one attribute may join its
	// neighbours into a new one ("<img s src=x:1 rc=javascript:2>").
	for {
		out := htmlURLAttr.ReplaceAllStringFunc(s, func(a string) string {
			m := htmlURLAttr.FindStringSubmatch(a)
			if safeScheme(html.UnescapeString(m[1] + m[2] + m[3])) {
				return a
			}
			return ""
		})
		if out == s {
			break
		}
		s = out
	}
	if !strings.Contains(s, "<a") && !strings.Contains(s, "<A") {
		return s
	}
	s = htmlAnchor.ReplaceAllStringFunc(s, func(a string) string {
		m := htmlAnchor.FindStringSubmatch(a)
		if linksServed(m[1]) {
			return a
		}
		return m[2]
	})
	return htmlAnchorOpen.ReplaceAllStringFunc(s, func(a string) string {
		if linksServed(htmlAnchorOpen.FindStringSubmatch(a)[1]) {
			return a
		}
		return ""
	})
}

// linksServed reports whether the attributes of an anchor link to
// something the facade may hand out: no href, another host, or a path of
// the route table.
func linksServed(attrs string) bool {
	m := htmlHref.FindStringSubmatch(attrs)
	if m == nil {
		return true
	}
	href := html.UnescapeString(m[1] + m[2] + m[3])
	if !safeScheme(href) {
		return false
	}
	path, ours := strings.CutPrefix(href, basePlaceholder)
	if !ours {
		if !strings.HasPrefix(href, "/") || strings.HasPrefix(href, "//") {
			return true // another host's, not the facade's
		}
		path = href
	}
	if i := strings.IndexAny(path, "?#"); i >= 0 {
		path = path[:i]
	}
	return servedPath(path)
}

// walkLinks calls fn for every "link" object in v.
func walkLinks(v any, fn func(map[string]any)) {
	switch t := v.(type) {
	case []any:
		for _, e := range t {
			walkLinks(e, fn)
		}
	case map[string]any:
		if link, ok := t["link"].(map[string]any); ok {
			fn(link)
		}
		for _, e := range t {
			walkLinks(e, fn)
		}
	}
}

// artifactRedirectToRoute turns Bamboo's
// {base}/build/result/artifactUrlRedirect.action?planKey=K-P-J&buildNumber=N&artifactName=A
// (sample 09) into the artifact URL it redirects to, under the facade:
// {base}/browse/K-P-N/artifact/J/A/ for a job's artifact and
// {base}/browse/K-P-N/artifact/shared/A/ for a plan's shared one (the
// forms of samples 03 and 10, and of the test server). Anything
// else is returned unchanged (it has already lost the upstream host).
func artifactRedirectToRoute(href string) string {
	const redirect = basePlaceholder + "/build/result/artifactUrlRedirect.action?"
	query, ok := strings.CutPrefix(href, redirect)
	if !ok {
		return href
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return href
	}
	planKey, number := q.Get("planKey"), q.Get("buildNumber")
	// Bamboo's artifact URLs write spaces in names as hyphens (sample 03).
	name := strings.ReplaceAll(q.Get("artifactName"), " ", "-")
	parts := strings.Split(planKey, "-")
	if len(parts) < 2 || len(parts) > 3 || !facade.ValidProjectKey(parts[0]) || !facade.ValidPlanKey(parts[1]) ||
		!facade.ValidBuildNumber(number) {
		return href
	}
	if _, ok := artifactSegment(url.PathEscape(name), false); !ok {
		return href
	}
	dir := "shared"
	if len(parts) == 3 {
		if !facade.ValidPlanKey(parts[2]) {
			return href
		}
		dir = parts[2]
	}
	return basePlaceholder + "/browse/" + parts[0] + "-" + parts[1] + "-" + number + "/artifact/" + dir + "/" + url.PathEscape(name) + "/"
}
