package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"

	"github.com/labstack/echo/v4"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/cache"
	"github.com/facade-dev/facade/upstream"
)

// Results serves GET /rest/api/latest/result/:key ("K-P" or "K-P.json"):
// a page of the plan's results, with artifacts when asked for. The plan
// permission is checked before the cache or the upstream is touched, so a
// refusal says nothing about whether the plan exists.
func (h *Handler) Results(c echo.Context) error {
	plan, err := parsePlanParam(c.Param("key"))
	if err != nil {
		return err
	}
	params, err := parseListParams(c.Request().URL.RawQuery, resultExpands)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	if err := h.authorizePlan(c, "view_results", facade.PrincipalFrom(ctx), plan); err != nil {
		return err
	}
	entry, err := h.document(ctx, resultsDocKey(plan, params), h.resultsFetcher(plan, params))
	if err != nil {
		return err
	}
	body, err := h.resultsView(entry, h.publicBase(c.Request()))
	if err != nil {
		return err
	}
	return writeJSON(c, entry.Status, body)
}

// resultsFetcher asks upstream for exactly what the request selected:
// the query is built from the parsed parameters, never from the caller's
// text.
func (h *Handler) resultsFetcher(plan planRef, params listParams) func(context.Context) ([]byte, error) {
	q := upstream.ResultQuery{MaxResults: params.maxResults, StartIndex: params.startIndex}
	switch {
	case params.expand&expandArtifacts != 0:
		q.Expand = []string{upstream.ExpandResultArtifacts}
	case params.expand&expandResult != 0:
		q.Expand = []string{upstream.ExpandResults}
	}
	return func(ctx context.Context) ([]byte, error) {
		body, err := h.up.Results(ctx, plan.project, plan.plan, q)
		if err != nil {
			return nil, err
		}
		// Checked before it is cached: a document of another shape would
		// otherwise be served (as a 502) for a whole TTL.
		if err := checkResultsShape(body); err != nil {
			return nil, upstreamBad(err)
		}
		return body, nil
	}
}

var errNoResults = errors.New("upstream result list has no results object")

func checkResultsShape(body []byte) error {
	var doc struct {
		Results json.RawMessage `json:"results"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return err
	}
	if t := bytes.TrimSpace(doc.Results); len(t) == 0 || t[0] != '{' {
		return errNoResults
	}
	return nil
}

// resultsView returns the page with its links rewritten for base. It is
// the same for every principal allowed to see the plan, so it is keyed by
// document version and base only.
func (h *Handler) resultsView(entry cache.Entry, base string) ([]byte, error) {
	key := viewKey{kind: kindResults, doc: entry.Version, base: base}
	if body, ok := h.views.get(key); ok {
		return body, nil
	}
	v, err, _ := h.builds.Do(flightKey(key), func() (any, error) {
		body, err := rewriteDocument(entry.Body)
		if err != nil {
			return nil, upstreamBad(err)
		}
		body = finish(body, base)
		h.views.add(key, body, int64(len(body)))
		return body, nil
	})
	if err != nil {
		return nil, err
	}
	return v.([]byte), nil
}

// rewriteDocument decodes a document, rewrites every upstream URL in it to
// the placeholder and encodes it again.
func rewriteDocument(body []byte) ([]byte, error) {
	doc, err := decodeJSON(body)
	if err != nil {
		return nil, err
	}
	if _, ok := doc.(map[string]any); !ok {
		return nil, errNotObject
	}
	doc = newRewriter(doc).rewriteTree(doc)
	var buf bytes.Buffer
	if err := encodeJSON(&buf, doc); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
