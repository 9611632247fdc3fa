package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
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

// projectsPage is the part of a Bamboo project list the collector reads;
// everything else of the first page's top level is kept as is.
type projectsPage struct {
	Projects struct {
		Size    int               `json:"size"`
		Project []json.RawMessage `json:"project"`
	} `json:"projects"`
}

var errNoProgress = errors.New("upstream project list: a page before the end was empty")

// collect fetches every page of an upstream list into one document of
// Bamboo's shape. It runs inside the cache's fill, so concurrent misses
// share one collection.
func (c *collector) collect(ctx context.Context, rt *Route, segments []string, vals url.Values) ([]byte, error) {
	var (
		top   map[string]json.RawMessage
		items []json.RawMessage
	)
	pager := listPager{size: upstreamPage}
	for start := 0; start < maxCollected; {
		q := url.Values{}
		for k, v := range vals {
			q[k] = v
		}
		q.Set("max-results", strconv.Itoa(upstreamPage))
		if start > 0 {
			q.Set("start-index", strconv.Itoa(start))
		}
		body, err := c.up.Document(ctx, rt.Name, q, segments...)
		if err != nil {
			return nil, err
		}
		var page map[string]json.RawMessage
		if err := json.Unmarshal(body, &page); err != nil {
			return nil, upstreamBad(err)
		}
		var list map[string]json.RawMessage
		if err := json.Unmarshal(page[rt.List], &list); err != nil || list == nil {
			return nil, upstreamBad(errNoList)
		}
		var got []json.RawMessage
		if raw, ok := list[rt.Item]; ok {
			if err := json.Unmarshal(raw, &got); err != nil {
				return nil, upstreamBad(err)
			}
		}
		if top == nil {
			top = page
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
	list, err := json.Marshal(map[string]any{
		"size": len(items), "expand": rt.Item, "start-index": 0,
		"max-result": len(items), rt.Item: nonNil(items),
	})
	if err != nil {
		return nil, upstreamBad(err)
	}
	top[rt.List] = list
	doc, err := json.Marshal(top)
	if err != nil {
		return nil, upstreamBad(err)
	}
	return doc, nil
}

// fetchAllProjects collects every project (up to maxProjects) with plans
// expanded, page by page, into one Bamboo-shaped document. It runs inside
// the cache's fill, so concurrent misses share one collection.
func (c *collector) fetchAllProjects(ctx context.Context) ([]byte, error) {
	return c.collectProjects(ctx, false)
}

// fetchCloverProjects is fetchAllProjects with cloverEnabled: the projects
// and plans Bamboo lists with Clover enabled.
func (c *collector) fetchCloverProjects(ctx context.Context) ([]byte, error) {
	return c.collectProjects(ctx, true)
}

func (c *collector) collectProjects(ctx context.Context, clover bool) ([]byte, error) {
	var (
		top      map[string]json.RawMessage
		projects []json.RawMessage
	)
	for start := 0; start < maxProjects; {
		body, err := c.up.Projects(ctx, upstream.ProjectQuery{
			Expand:        []string{upstream.ExpandProjectPlans},
			CloverEnabled: clover,
			MaxResults:    min(upstreamProjectPage, maxProjects-start),
			StartIndex:    start,
		})
		if err != nil {
			return nil, err
		}
		var page projectsPage
		if err := json.Unmarshal(body, &page); err != nil {
			return nil, upstreamBad(err)
		}
		if top == nil {
			if err := json.Unmarshal(body, &top); err != nil {
				return nil, upstreamBad(err)
			}
		}
		projects = append(projects, page.Projects.Project...)
		start += len(page.Projects.Project)
		if start >= page.Projects.Size {
			break
		}
		if len(page.Projects.Project) == 0 {
			return nil, upstreamBad(errNoProgress)
		}
	}
	if len(projects) >= maxProjects {
		c.log.Warn("upstream project list truncated", "limit", maxProjects)
	}
	list, err := json.Marshal(map[string]any{
		"size": len(projects), "expand": "project", "start-index": 0,
		"max-result": len(projects), "project": nonNil(projects),
	})
	if err != nil {
		return nil, upstreamBad(err)
	}
	top["projects"] = list
	doc, err := json.Marshal(top)
	if err != nil {
		return nil, upstreamBad(err)
	}
	return doc, nil
}

func nonNil(s []json.RawMessage) []json.RawMessage {
	if s == nil {
		return []json.RawMessage{}
	}
	return s
}
