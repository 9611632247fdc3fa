package upstream

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	facade "github.com/facade-dev/facade"
)

// failingServer answers every request with status and counts them.
func failingServer(t *testing.T, status int) (*Client, *atomic.Int32) {
	t.Helper()
	var calls atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		calls.Add(1)
		w.WriteHeader(status)
	}))
	t.Cleanup(ts.Close)
	return newRetryingClient(t, ts.URL, 250*time.Millisecond), &calls
}

func newRetryingClient(t *testing.T, base string, timeout time.Duration) *Client {
	t.Helper()
	c, err := New(Config{BaseURL: base, Retries: 5, Timeout: timeout, BreakerFailures: 100, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestAWriteIsNeverRetried: resty retries what retryable allows, and it
// allows GET and HEAD only; a write sent twice could do its work twice.
func TestAWriteIsNeverRetried(t *testing.T) {
	c, calls := failingServer(t, http.StatusServiceUnavailable)
	resp, err := c.http.R().Post(c.base + "/rest/api/latest/queue/PROJ-CORE.json")
	if err != nil || resp.StatusCode() != http.StatusServiceUnavailable {
		t.Fatalf("POST: %v %v", resp, err)
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("a POST answered 503 was sent %d times, want once", n)
	}
	calls.Store(0)
	if _, err := c.http.R().Get(c.base + "/x"); err != nil {
		t.Fatal(err)
	}
	if n := calls.Load(); n < 2 {
		t.Fatalf("a GET answered 503 was sent %d times: the retries are off", n)
	}
}

// TestRetriesStopWhenTheBudgetCannotFitThePause: with more retries than
// the time budget holds, the call stops retrying before the budget runs
// out and answers with its last attempt's outcome (a 502 for a 500), not
// with a timeout of its own making; for an artifact too, whose budget is
// a watchdog rather than a deadline.
func TestRetriesStopWhenTheBudgetCannotFitThePause(t *testing.T) {
	c, calls := failingServer(t, http.StatusInternalServerError)
	_, err := c.Projects(context.Background(), ProjectQuery{})
	if !errors.Is(err, facade.ErrUpstreamBad) {
		t.Fatalf("document: %v, want the last attempt's 502", err)
	}
	if n := calls.Load(); n < 2 || n > 4 {
		t.Fatalf("document: %d calls in a 250 ms budget, want 2-3 (pauses of 100-200 ms)", n)
	}
	_, err = c.Artifact(context.Background(), "/download/PROJ-CORE-JOB1/build_logs/PROJ-CORE-JOB1-6.log")
	if !errors.Is(err, facade.ErrUpstreamBad) {
		t.Fatalf("artifact: %v, want the last attempt's 502", err)
	}
}
