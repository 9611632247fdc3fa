package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/go-resty/resty/v2"

	facade "github.com/facade-dev/facade"
)

// Operation labels of metrics.UpstreamCalls and metrics.UpstreamLatency.
const (
	opProjects = "projects"
	opArtifact = "artifact"
)

// outcome classifies one attempt, and then the whole call.
type outcome int

const (
	outcomeOK        outcome = iota
	outcomeNotFound          // 404 (or 403, hidden from the service account): absent; upstream is healthy
	outcomeRejected          // other 4xx, 3xx, odd 2xx: upstream is up but said no
	outcomeInvalid           // unreadable body, redirect elsewhere: upstream is broken
	outcomeRetryable         // network error, 5xx, 429: worth another try
	outcomeTimeout           // the deadline passed
	outcomeCanceled          // the caller gave up
)

// metricLabel is the result label of metrics.UpstreamCalls.
func (o outcome) metricLabel() string {
	switch o {
	case outcomeOK:
		return "ok"
	case outcomeNotFound:
		return "not_found"
	case outcomeTimeout:
		return "timeout"
	case outcomeCanceled:
		return "canceled"
	}
	return "error"
}

// breakerReport is what the breaker learns from a call: upstream answering
// properly (even 404 or 403) is a success; broken answers, 5xx and
// timeouts are failures; a call the caller abandoned does not count.
func (o outcome) breakerReport() error {
	switch o {
	case outcomeOK, outcomeNotFound, outcomeRejected:
		return nil
	case outcomeCanceled:
		return errExcluded
	}
	return errFailure
}

// clientError maps a failed call to what the client may see.
func (o outcome) clientError(cause error) error {
	switch o {
	case outcomeNotFound:
		return facade.Wrap(facade.ErrNotFound, cause)
	case outcomeTimeout, outcomeCanceled:
		return facade.Wrap(facade.ErrUpstreamTimeout, cause)
	}
	return facade.Wrap(facade.ErrUpstreamBad, cause)
}

// errBudget is the cancellation cause when Config.Timeout runs out.
var errBudget = errors.New("upstream time budget exhausted")

// Document is a JSON document as Bamboo sent it: its bytes (what the
// response cache stores) and the object they decode to, numbers kept
// exact (json.Number), so that a caller builds its views from Object
// without decoding Body again.
type Document struct {
	Body   []byte
	Object map[string]any
}

// document GETs a JSON document through the breaker, with resty's retries
// (newResty), and returns it once it is known to be one JSON object.
func (c *Client) document(ctx context.Context, op, target string) (Document, error) {
	start := c.cfg.Now()
	done, err := c.breaker.allow()
	if err != nil {
		c.finish(ctx, op, start, "open", 0, err)
		return Document{}, err
	}
	ctx, cancel := context.WithTimeoutCause(ctx, c.cfg.Timeout, errBudget)
	defer cancel()

	resp, result, cause := c.get(ctx, target, Range{}, false)
	var doc Document
	if result == outcomeOK {
		doc, result, cause = readDocument(resp.Body())
	}
	done(result.breakerReport())
	c.finish(ctx, op, start, result.metricLabel(), attempts(resp), cause)
	if result != outcomeOK {
		return Document{}, result.clientError(cause)
	}
	return doc, nil
}

// get sends one GET, retried by resty while it is retryable (retryable)
// and the time budget leaves room for the pause before the next try
// (retryPause). A document's body is read by resty, up to
// maxDocumentBytes; a file's (stream) is left unread for the caller, and
// closed here unless the answer is the file.
func (c *Client) get(ctx context.Context, target string, part Range, stream bool) (*resty.Response, outcome, error) {
	req := c.http.R().SetContext(ctx).SetDoNotParseResponse(stream)
	if stream {
		req.SetHeader("Accept", "*/*")
	} else {
		req.SetHeader("Accept", "application/json").SetResponseBodyLimit(maxDocumentBytes)
	}
	if part.Bytes != "" {
		req.SetHeader("Range", "bytes="+part.Bytes)
		if part.IfRange != "" {
			req.SetHeader("If-Range", part.IfRange)
		}
	}
	resp, err := req.Get(target)
	result, cause := classify(ctx, resp, err, part)
	if result != outcomeOK && stream && resp != nil && resp.RawResponse != nil {
		discard(resp.RawResponse.Body)
	}
	return resp, result, cause
}

// classify tells what one attempt's answer (or error) means. Only a 200 is
// the document or file; a 206 or 416 too when a range was asked for.
func classify(ctx context.Context, resp *resty.Response, err error, part Range) (outcome, error) {
	if errors.Is(err, errNoTimeToRetry) {
		err = nil // the last answer stands
	}
	if err != nil {
		return classifyError(ctx, err), err
	}
	status := resp.StatusCode()
	partial := status == http.StatusPartialContent || status == http.StatusRequestedRangeNotSatisfiable
	if status == http.StatusOK || part.Bytes != "" && partial {
		return outcomeOK, nil
	}
	err = fmt.Errorf("upstream answered %d", status)
	switch {
	case status == http.StatusNotFound, status == http.StatusForbidden:
		// 403 is Bamboo hiding a plan from the service account: the caller
		// was authorized by the facade, and for them the thing is absent.
		return outcomeNotFound, err
	case status >= 500 || status == http.StatusTooManyRequests:
		return outcomeRetryable, err
	}
	return outcomeRejected, err
}

// classifyError tells a transport error apart: our deadline, the caller
// leaving, a refused redirect or an oversized document, or a network
// failure worth retrying.
func classifyError(ctx context.Context, err error) outcome {
	switch {
	case errors.Is(err, errRedirectElsewhere), errors.Is(err, resty.ErrResponseBodyTooLarge):
		return outcomeInvalid
	case ctx.Err() == nil:
		return outcomeRetryable
	case errors.Is(context.Cause(ctx), errBudget), errors.Is(ctx.Err(), context.DeadlineExceeded):
		return outcomeTimeout
	}
	return outcomeCanceled
}

// retryable is resty's retry condition: an idempotent request whose
// attempt is worth another (a network error, 5xx, 429). resty asks it
// after every attempt, with resp nil when the request could not be sent.
func retryable(resp *resty.Response, err error) bool {
	if resp == nil || resp.Request == nil {
		return false
	}
	if m := resp.Request.Method; m != http.MethodGet && m != http.MethodHead {
		return false // a write is never sent twice
	}
	result, _ := classify(resp.Request.Context(), resp, err, Range{})
	return result == outcomeRetryable
}

// Pauses between tries: resty's capped exponential backoff, 100 ms doubled
// per try up to 2 s, with jitter in the upper half of each step so that
// instances do not retry in step.
const (
	retryWait    = 100 * time.Millisecond
	retryMaxWait = 2 * time.Second
)

// errNoTimeToRetry ends the retries when the time budget would run out
// during the next pause: the call then answers with its last attempt's
// outcome (a 502 for a 500), not with a timeout of its own making.
var errNoTimeToRetry = errors.New("no time left for another try")

type budgetKey struct{}

// withBudget notes when a call's time budget ends, for retryPause. A
// document's context has that deadline too; an artifact's has not (its
// budget turns into an idle watchdog once the headers are in).
func withBudget(ctx context.Context, d time.Duration) context.Context {
	return context.WithValue(ctx, budgetKey{}, time.Now().Add(d))
}

// retryPause is resty's RetryAfter: 0 (resty's own backoff) while the
// longest pause resty may pick still ends before the budget or the
// caller's deadline, else errNoTimeToRetry.
func retryPause(_ *resty.Client, resp *resty.Response) (time.Duration, error) {
	ctx := resp.Request.Context()
	longest := min(retryWait<<max(resp.Request.Attempt-1, 0), retryMaxWait)
	end, ok := ctx.Value(budgetKey{}).(time.Time)
	if d, has := ctx.Deadline(); has && (!ok || d.Before(end)) {
		end, ok = d, true
	}
	if ok && time.Until(end) <= longest {
		return 0, errNoTimeToRetry
	}
	return 0, nil
}

// discardRetried releases the body of an answer resty is about to retry.
func discardRetried(resp *resty.Response, _ error) {
	if resp != nil && resp.RawResponse != nil {
		discard(resp.RawResponse.Body)
	}
}

// attempts is how many tries a call made.
func attempts(resp *resty.Response) int {
	if resp == nil || resp.Request == nil {
		return 1
	}
	return max(resp.Request.Attempt, 1)
}

var errNotObject = errors.New("upstream document is not a JSON object")

// readDocument decodes a 200 body, which must be one JSON object and
// nothing after it: the one decoding of the document (Document.Object).
func readDocument(body []byte) (Document, outcome, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil || obj == nil {
		return Document{}, outcomeInvalid, errNotObject
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Document{}, outcomeInvalid, errNotObject
	}
	return Document{Body: body, Object: obj}, outcomeOK, nil
}

// discard drains a little of an unwanted body, so the connection can be
// reused, and closes it.
func discard(body io.ReadCloser) {
	_, _ = io.CopyN(io.Discard, body, 64<<10)
	_ = body.Close()
}

// finish records metrics and logs a call that did not succeed.
func (c *Client) finish(ctx context.Context, op string, start time.Time, result string, attempts int, cause error) {
	elapsed := c.cfg.Now().Sub(start)
	c.metrics.UpstreamCalls.WithLabelValues(op, result).Inc()
	c.metrics.UpstreamLatency.WithLabelValues(op).Observe(elapsed.Seconds())
	level := slog.LevelWarn
	switch result {
	case "ok":
		return
	case "not_found", "canceled", "open":
		// Expected, or already logged once (the breaker logs opening).
		level = slog.LevelDebug
	}
	c.log.Log(ctx, level, "upstream call failed",
		"op", op, "result", result, "attempts", attempts,
		"duration_ms", elapsed.Milliseconds(), "err", cause)
}
