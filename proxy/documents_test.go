package proxy

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/facade-dev/facade/cache"
	"github.com/facade-dev/facade/internal/testkit/testclock"
	"github.com/facade-dev/facade/internal/testkit/testredis"
	"github.com/facade-dev/facade/upstream"
)

// heldViews are the views every held document keeps, by key (tests).
func (d *documents) heldViews() map[viewKey]view {
	out := map[viewKey]view{}
	for _, h := range d.held.Values() {
		if h.doc == nil {
			continue
		}
		h.doc.mu.Lock()
		for k, v := range h.doc.byKey {
			out[k] = v
		}
		h.doc.mu.Unlock()
	}
	return out
}

// forgetViews drops every view and visibility of every held document, so
// the next request builds its view again (benchmarks of a cold view).
func (d *documents) forgetViews() {
	for _, h := range d.held.Values() {
		if h.doc != nil {
			d.dropViews(h.doc)
		}
	}
}

// testDocuments is the one cache on a fresh Redis database, fresh for a
// minute on clock.
func testDocuments(t *testing.T, clock *testclock.Clock) *documents {
	c := cache.New(testredis.Client(t), cache.Config{TTL: time.Minute, Now: clock.Now, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	return newDocuments(c, Config{CacheTTL: time.Minute, Now: clock.Now, ViewCacheEntries: DefaultViewCacheEntries, ViewCacheBytes: DefaultViewCacheBytes})
}

// TestAMissIsParsedFromTheObjectItFetched: a miss's views are made of the
// object the upstream client decoded, not of its bytes decoded again (the
// object here holds a member its bytes lack, to tell which was used); a
// document read from Redis by an instance that did not fetch it is decoded
// from its bytes, once.
func TestAMissIsParsedFromTheObjectItFetched(t *testing.T) {
	clock := testclock.New()
	d := testDocuments(t, clock)
	body := []byte(`{"key":"PROJ-CORE"}`)
	fetch := func(context.Context) (upstream.Document, error) {
		return upstream.Document{Body: body, Object: map[string]any{"key": "PROJ-CORE", "decoded": "by upstream"}}, nil
	}
	e, doc, err := d.get(context.Background(), "doc:test", fetch, nil)
	if err != nil || e.Status != cache.Miss {
		t.Fatalf("%v %v", e.Status, err)
	}
	parsed, err := doc.parse(asObject)
	if err != nil || parsed.(map[string]any)["decoded"] != "by upstream" {
		t.Fatalf("the miss was parsed from its bytes again: %v %v", parsed, err)
	}

	other := testDocuments(t, clock)
	other.cache = d.cache // another instance, the same Redis
	e, doc, err = other.get(context.Background(), "doc:test", fetch, nil)
	if err != nil || e.Status != cache.Hit {
		t.Fatalf("%v %v", e.Status, err)
	}
	if parsed, err := doc.parse(asObject); err != nil || parsed.(map[string]any)["decoded"] != nil || parsed.(map[string]any)["key"] != "PROJ-CORE" {
		t.Fatalf("read from Redis: %v %v", parsed, err)
	}
}

// TestARefillOfTheSameDocumentKeepsWhatWasMadeOfIt: when a document's
// lifetime ends and upstream answers the same bytes again, the views
// built of it stay (every principal's view of the project list would
// otherwise be built again every TTL); a changed document starts over.
func TestARefillOfTheSameDocumentKeepsWhatWasMadeOfIt(t *testing.T) {
	clock := testclock.New()
	d := testDocuments(t, clock)
	body := `{"key":"PROJ-CORE"}`
	fetch := func(context.Context) (upstream.Document, error) {
		return upstream.Document{Body: []byte(body), Object: map[string]any{"key": "PROJ-CORE"}}, nil
	}
	_, first, err := d.get(context.Background(), "doc:test", fetch, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := first.view(d, viewKey{kind: kindResults}, func() ([]byte, error) { return []byte(body), nil }); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Minute + time.Second)
	e, again, err := d.get(context.Background(), "doc:test", fetch, nil)
	if err != nil || e.Status != cache.Miss || again != first {
		t.Fatalf("refilled with the same bytes: %v %v, same document %v", e.Status, err, again == first)
	}
	body = `{"key":"PROJ-LIB"}`
	clock.Advance(time.Minute + time.Second)
	if _, changed, err := d.get(context.Background(), "doc:test", fetch, nil); err != nil || changed == first || len(d.heldViews()) != 0 {
		t.Fatalf("a changed document kept the old one's views: %v, %d views", err, len(d.heldViews()))
	}
}
