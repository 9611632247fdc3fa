package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"net/url"
	"strconv"

	"github.com/facade-dev/facade/upstream"
)

// Whole lists read from upstream. The project list (every project, plans
// expanded) and the lists answered per principal (latest results, branches)
// are collected page by page into one Bamboo-shaped document each, shared
// by everyone through the response cache, then filtered per principal in
// process. Fetching per principal would multiply upstream calls by the
// number of users; fetching per caller page would make the filtered paging
// wrong (a page of 25 upstream projects may hold 3 visible ones).

// collector reads whole lists from upstream. Its methods run inside the
// cache's fill, so concurrent misses share one collection.
type collector struct {
	up  *upstream.Client
	log *slog.Logger
}

const (
	// upstreamPage is the page size asked of Bamboo while collecting a
	// list: the largest a caller may ask of the facade, so collecting
	// costs a call per thousand items, never one per plan. Bamboo
	// documents no cap; a server that answers smaller pages is followed
	// (listPager).
	upstreamPage = maxPage
	// maxCollected bounds a collected list (and so the document's size).
	maxCollected = 10000
)

const (
	// upstreamProjectPage is the page size asked of Bamboo while collecting
	// (the total it answers says when the list ends, so a server that
	// answers smaller pages is simply asked more often).
	upstreamProjectPage = upstreamPage
	// maxProjects bounds the collected list (and so the document's size).
	maxProjects = 10000
)

// listPager decides whether a collected list has another page. Result
// lists carry no total (Bamboo's size there is the count returned), so
// the end is a page shorter than the page size. A first page shorter than
// asked but of minCappedPage items or more may be a server's page cap
// rather than the end: its length becomes the page size, at the cost of
// one more (empty) call when it was the end after all.
type listPager struct{ size int }

// minCappedPage: a short first page at least this long is taken for a cap.
const minCappedPage = 100

func (p *listPager) more(got int) bool {
	switch {
	case got == 0:
		return false
	case got >= p.size:
		return true
	case p.size == upstreamPage && got >= minCappedPage:
		p.size = got
		return true
	}
	return false
}

var errNoProgress = errors.New("upstream project list: a page before the end was empty")

// collect fetches every page of an upstream list into one document of
// Bamboo's shape: the first page's object with every page's items in its
// list. It runs inside the cache's fill, so concurrent misses share one
// collection; each page is decoded once (by the upstream client), and the
// collected object is what this instance's views are made of.
func (c *collector) collect(ctx context.Context, rt *Route, at upstream.Path, vals url.Values) (upstream.Document, error) {
	var (
		top   map[string]any
		items []any
	)
	pager := listPager{size: upstreamPage}
	for start := 0; start < maxCollected; {
		q := maps.Clone(vals)
		q.Set("max-results", strconv.Itoa(upstreamPage))
		if start > 0 {
			q.Set("start-index", strconv.Itoa(start))
		}
		page, err := c.up.Document(ctx, rt.Name, at, q)
		if err != nil {
			return upstream.Document{}, err
		}
		list, ok := page.Object[rt.List].(map[string]any)
		if !ok {
			return upstream.Document{}, upstreamBad(errNoList)
		}
		got, ok := listItems(list[rt.Item])
		if !ok {
			return upstream.Document{}, upstreamBad(errNoList)
		}
		if top == nil {
			top = page.Object
		}
		items = append(items, got...)
		start += len(got)
		if !pager.more(len(got)) {
			break
		}
	}
	if len(items) >= maxCollected {
		c.log.Warn("upstream list truncated", "route", rt.Name, "limit", maxCollected)
	}
	return collected(top, rt.List, rt.Item, items)
}

// listItems reads a list's items: an array, or nothing (absent, null).
func listItems(v any) ([]any, bool) {
	if v == nil {
		return nil, true
	}
	items, ok := v.([]any)
	return items, ok
}

// collected is top with its list member holding all of items, encoded
// for the shared cache.
func collected(top map[string]any, list, item string, items []any) (upstream.Document, error) {
	if items == nil {
		items = []any{}
	}
	top[list] = map[string]any{
		"size": len(items), "expand": item, "start-index": 0, "max-result": len(items), item: items,
	}
	body, err := encoded(top)
	if err != nil {
		return upstream.Document{}, err
	}
	return upstream.Document{Body: body, Object: top}, nil
}

// fetchAllProjects collects every project (up to maxProjects) with plans
// expanded, page by page, into one Bamboo-shaped document. It runs inside
// the cache's fill, so concurrent misses share one collection.
func (c *collector) fetchAllProjects(ctx context.Context) (upstream.Document, error) {
	return c.collectProjects(ctx, false)
}

// fetchCloverProjects is fetchAllProjects with cloverEnabled: the projects
// and plans Bamboo lists with Clover enabled.
func (c *collector) fetchCloverProjects(ctx context.Context) (upstream.Document, error) {
	return c.collectProjects(ctx, true)
}

func (c *collector) collectProjects(ctx context.Context, clover bool) (upstream.Document, error) {
	var (
		top      map[string]any
		projects []any
	)
	for start := 0; start < maxProjects; {
		page, err := c.up.Projects(ctx, upstream.ProjectQuery{
			Expand:        []string{upstream.ExpandProjectPlans},
			CloverEnabled: clover,
			MaxResults:    min(upstreamProjectPage, maxProjects-start),
			StartIndex:    start,
		})
		if err != nil {
			return upstream.Document{}, err
		}
		list, _ := page.Object["projects"].(map[string]any)
		got, ok := listItems(list["project"])
		size, sized := list["size"].(json.Number)
		total, err := size.Int64()
		if !ok || list["size"] != nil && (!sized || err != nil) {
			return upstream.Document{}, upstreamBad(errNoList)
		}
		if top == nil {
			top = page.Object
		}
		projects = append(projects, got...)
		start += len(got)
		if int64(start) >= total {
			break
		}
		if len(got) == 0 {
			return upstream.Document{}, upstreamBad(errNoProgress)
		}
	}
	if len(projects) >= maxProjects {
		c.log.Warn("upstream project list truncated", "limit", maxProjects)
	}
	return collected(top, "projects", "project", projects)
}
