package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"time"

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

// document GETs a JSON document through the breaker, with retries, and
// returns its body once it is known to be a JSON object.
func (c *Client) document(ctx context.Context, op, target string) ([]byte, error) {
	start := c.cfg.Now()
	done, err := c.breaker.allow()
	if err != nil {
		c.finish(ctx, op, start, "open", 0, err)
		return nil, err
	}
	ctx, cancel := context.WithTimeoutCause(ctx, c.cfg.Timeout, errBudget)
	defer cancel()

	var body []byte
	result, cause, attempts := c.retry(ctx, func(ctx context.Context) (outcome, error) {
		resp, result, err := c.attempt(ctx, target, "application/json", Range{})
		if result != outcomeOK {
			return result, err
		}
		body, result, err = readDocument(ctx, resp)
		return result, err
	})
	done(result.breakerReport())
	c.finish(ctx, op, start, result.metricLabel(), attempts, cause)
	if result != outcomeOK {
		return nil, result.clientError(cause)
	}
	return body, nil
}

// retry runs try until it succeeds, fails for good, the retries are used
// up, or the deadline leaves no room for the next pause.
func (c *Client) retry(ctx context.Context, try func(context.Context) (outcome, error)) (outcome, error, int) {
	for attempt := 0; ; attempt++ {
		result, err := try(ctx)
		if result != outcomeRetryable || attempt >= c.cfg.Retries || !pause(ctx, backoff(attempt)) {
			return result, err, attempt + 1
		}
	}
}

// backoff is 100ms doubled per attempt, capped at 2s, with jitter in its
// upper half so that instances do not retry in step.
func backoff(attempt int) time.Duration {
	d := min(100*time.Millisecond<<attempt, 2*time.Second)
	return d/2 + rand.N(d/2)
}

// pause waits d unless the deadline would pass first; it reports whether
// there is time left to try again.
func pause(ctx context.Context, d time.Duration) bool {
	if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) <= d {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// attempt sends one GET. It returns the response, body unread, only when
// the status is 200; otherwise the body is drained and closed.
func (c *Client) attempt(ctx context.Context, target, accept string, part Range) (*http.Response, outcome, error) {
	req := c.http.R().SetContext(ctx).SetHeader("Accept", accept)
	if part.Bytes != "" {
		req.SetHeader("Range", "bytes="+part.Bytes)
		if part.IfRange != "" {
			req.SetHeader("If-Range", part.IfRange)
		}
	}
	resp, err := req.Get(target)
	if err != nil {
		return nil, classifyError(ctx, err), err
	}
	raw := resp.RawResponse
	partial := raw.StatusCode == http.StatusPartialContent || raw.StatusCode == http.StatusRequestedRangeNotSatisfiable
	if raw.StatusCode == http.StatusOK || part.Bytes != "" && partial {
		return raw, outcomeOK, nil
	}
	discard(raw.Body)
	err = fmt.Errorf("upstream answered %d", raw.StatusCode)
	switch s := raw.StatusCode; {
	case s == http.StatusNotFound, s == http.StatusForbidden:
		// 403 is Bamboo hiding a plan from the service account: the caller
		// was authorized by the facade, and for them the thing is absent.
		return nil, outcomeNotFound, err
	case s >= 500 || s == http.StatusTooManyRequests:
		return nil, outcomeRetryable, err
	}
	return nil, outcomeRejected, err
}

// classifyError tells a transport error apart: our deadline, the caller
// leaving, a refused redirect, or a network failure worth retrying.
func classifyError(ctx context.Context, err error) outcome {
	switch {
	case errors.Is(err, errRedirectElsewhere):
		return outcomeInvalid
	case ctx.Err() == nil:
		return outcomeRetryable
	case errors.Is(context.Cause(ctx), errBudget), errors.Is(ctx.Err(), context.DeadlineExceeded):
		return outcomeTimeout
	}
	return outcomeCanceled
}

// readDocument reads a 200 body and checks it is one JSON object.
func readDocument(ctx context.Context, resp *http.Response) ([]byte, outcome, error) {
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDocumentBytes+1))
	if err != nil {
		return nil, classifyError(ctx, err), err
	}
	if len(body) > maxDocumentBytes {
		return nil, outcomeInvalid, errors.New("upstream document exceeds the size limit")
	}
	if trimmed := bytes.TrimLeft(body, " \t\r\n"); len(trimmed) == 0 || trimmed[0] != '{' || !json.Valid(body) {
		return nil, outcomeInvalid, errors.New("upstream document is not a JSON object")
	}
	return body, outcomeOK, nil
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
