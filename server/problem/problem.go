// Package problem is the HTTP layer's one error path: the table from error
// code to status, fixed sentence, wire code and Retry-After (table.go),
// and the one writer that turns any error into an RFC 9457 problem body.
// The server's middleware and handlers, Echo's router, the build handlers
// and the answers net/http writes on its own all go through it. The same table
// serves the pages at /problems/<code> that describe each cause for people
// (pages.go).
package problem

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/facade-dev/facade"
)

// Wire is a code as clients see it: the internal name with "-" for "_"
// ("insufficient_funds" is "insufficient-funds"). Reasons are written the
// same way.
func Wire[T ~string](code T) string { return strings.ReplaceAll(string(code), "_", "-") }

// TypePrefix is the path of the problem pages: a body's type is
// TypePrefix + its wire code.
const TypePrefix = "/problems/"

// body is an RFC 9457 problem, with the members docs/contract.md §2 adds.
type body struct {
	Type      string `json:"type"`
	Code      string `json:"code"`
	Title     string `json:"title"`
	Status    int    `json:"status"`
	Detail    string `json:"detail"`
	RequestID string `json:"request_id"`
	Errors    []item `json:"errors,omitempty"`
	// ErrorMessages is what Atlassian clients display (Bamboo routes only).
	ErrorMessages []string `json:"errorMessages,omitempty"`
}

// item is one entry of errors: which input, which rule, in what words.
type item struct {
	Parameter string `json:"parameter"`
	Code      string `json:"code"`
	Detail    string `json:"detail"`
}

// classify finds err's line in the table. Anything it does not know is a
// 500: no text of err ever reaches a client.
func classify(err error) (*facade.Error, problemKind, time.Duration) {
	var (
		fe      *facade.Error
		he      *echo.HTTPError
		tooBig  *http.MaxBytesError
		unknown = problems[facade.ErrInternal.Code]
	)
	switch {
	case errors.As(err, &fe):
	case errors.As(err, &tooBig):
		fe = facade.ErrBodyTooLarge
	case errors.As(err, &he) && echoRefusals[he.Code] != nil:
		fe = echoRefusals[he.Code]
	default:
		return facade.ErrInternal, unknown, 0
	}
	kind, ok := problems[fe.Code]
	if !ok {
		return facade.ErrInternal, unknown, 0
	}
	retry := kind.retryAfter
	if fe.RetryAfter > 0 {
		retry = fe.RetryAfter
	}
	return fe, kind, retry
}

// Render is the one writer of error responses: it sets the headers an
// error carries on h and returns the status and body. Handler and the
// server's connection-level answers (server/answers.go) both use it.
func Render(h http.Header, err error, requestID string) (int, []byte) {
	return render(h, err, requestID, false)
}

// render writes the problem; errorMessages adds Atlassian's member.
func render(h http.Header, err error, requestID string, errorMessages bool) (int, []byte) {
	fe, kind, retry := classify(err)
	if retry > 0 {
		h.Set("Retry-After", strconv.Itoa(int((retry+time.Second-1)/time.Second)))
	}
	if kind.status == http.StatusUnauthorized {
		h.Set("WWW-Authenticate", challenge(kind))
	}
	h.Set(echo.HeaderContentType, "application/problem+json")
	wire := Wire(fe.Code)
	p := body{
		Type:      TypePrefix + wire,
		Code:      wire,
		Title:     http.StatusText(kind.status),
		Status:    kind.status,
		Detail:    kind.detail,
		RequestID: requestID,
		Errors:    items(fe, kind),
	}
	if errorMessages {
		p.ErrorMessages = []string{kind.detail}
	}
	b, _ := json.Marshal(p)
	return kind.status, b
}

// challenge is the WWW-Authenticate of a 401 (RFC 6750 §3): a token that
// was sent and refused says why, in the table's sentence (which holds no
// quote or backslash, so it needs no escaping); a request without one
// gets the bare scheme (§3.1: no error attribute).
func challenge(kind problemKind) string {
	if !kind.invalidToken {
		return "Bearer"
	}
	return `Bearer error="invalid_token", error_description="` + kind.detail + `"`
}

// items are the body's errors: one per input the error names, each with
// the table's sentence for its rule.
func items(fe *facade.Error, kind problemKind) []item {
	if len(fe.Invalid) == 0 {
		return nil
	}
	out := make([]item, len(fe.Invalid))
	for i, in := range fe.Invalid {
		detail, ok := kind.reasons[in.Reason]
		if !ok {
			detail = kind.detail // a reason without its line (the tests refuse one)
		}
		out[i] = item{Parameter: in.Parameter, Code: Wire(in.Reason), Detail: detail}
	}
	return out
}

// Option changes what Handler writes.
type Option func(*handler)

type handler struct {
	errorMessages func(*http.Request) bool
}

// ErrorMessagesOn adds Atlassian's errorMessages member to the errors of
// the requests match selects (the Bamboo routes: Atlassian clients display
// that member, not detail).
func ErrorMessagesOn(match func(*http.Request) bool) Option {
	return func(h *handler) { h.errorMessages = match }
}

// Handler is Echo's HTTPErrorHandler, through which every error a
// middleware, a handler or Echo's router returns is answered. The request
// id is the one already on the response (X-Request-ID). The cause is
// logged for 5xx, with the request's context (so its trace_id goes on the
// line: server.LogHandler); nothing from err's text reaches the client.
func Handler(log *slog.Logger, opts ...Option) echo.HTTPErrorHandler {
	var cfg handler
	for _, o := range opts {
		o(&cfg)
	}
	return func(err error, c echo.Context) {
		id := c.Response().Header().Get("X-Request-ID")
		if c.Response().Committed {
			log.WarnContext(c.Request().Context(), "error after response started", "request_id", id, "err", err.Error())
			return
		}
		atlassian := cfg.errorMessages != nil && cfg.errorMessages(c.Request())
		status, b := render(c.Response().Header(), err, id, atlassian)
		if status >= 500 {
			log.ErrorContext(c.Request().Context(), "request failed", "request_id", id, "status", status,
				"code", string(facade.CodeOf(err)), "method", c.Request().Method, "path", c.Path(), "err", err.Error())
		}
		if c.Request().Method == http.MethodHead {
			_ = c.NoContent(status)
			return
		}
		_ = c.Blob(status, "application/problem+json", b)
	}
}

// Status is the status err is answered with.
func Status(err error) int {
	_, kind, _ := classify(err)
	return kind.status
}

// Codes lists every code of the table, sorted: what a body's code may be.
func Codes() []facade.Code {
	codes := make([]facade.Code, 0, len(problems))
	for c := range problems {
		codes = append(codes, c)
	}
	slices.Sort(codes)
	return codes
}

// Reasons lists the rules an input check of code can report, sorted.
func Reasons(code facade.Code) []facade.Reason {
	var out []facade.Reason
	for r := range problems[code].reasons {
		out = append(out, r)
	}
	slices.Sort(out)
	return out
}
