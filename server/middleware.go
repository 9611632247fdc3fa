package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/auth"
	"github.com/facade-dev/facade/metrics"
	"github.com/labstack/echo/v4"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

const (
	maxBody = 16 << 10
	// maxGradebookBody is a gradebook upload's limit (docs/contract.md §4):
	// a lecture of 5,000 students is about 250 KB, so 2 MiB leaves room
	// for the columns a spreadsheet adds.
	maxGradebookBody = 2 << 20
	apiCSP           = "default-src 'none'; frame-ancestors 'none'"
	// If-None-Match too: a page on another origin polls with conditional
	// reads (docs/contract.md §2, "Conditional reads").
	allowedHeaders = "Authorization, Content-Type, X-XSRF-TOKEN, Idempotency-Key, If-Match, If-None-Match, X-Request-ID"
	exposedHeaders = "ETag, Location, X-Request-ID, Retry-After, X-Cache"
)

// validRequestID reports whether a caller's X-Request-ID may be echoed and
// logged: 1-64 of A-Z a-z 0-9 . _ - (a loop: a regexp here cost a visible
// share of a request's CPU in bench/run.sh).
func validRequestID(id string) bool {
	if len(id) == 0 || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// requestID is the request's id, from its requestContext (baseHeaders
// makes it first, and every later context derives from that one); not from
// Echo's per-request store, whose map cost an allocation per request.
func requestID(c echo.Context) string {
	if rc := requestContextOf(c.Request().Context()); rc != nil {
		return rc.id
	}
	return ""
}

func newRequestID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// baseHeaders assigns the request id and sets the headers every response
// carries, before routing (before Echo: Server.ServeHTTP), so 404s and
// pre-flights get them too. It returns the request with its
// requestContext. (As Echo's Pre middleware it cost two allocations per
// request: Echo composes its Pre chain anew for every request.)
func baseHeaders(w http.ResponseWriter, r *http.Request) *http.Request {
	// The map, not Header.Get: "X-Request-ID" is not spelled canonically,
	// and canonicalizing it allocated a string per request.
	var id string
	if v := r.Header["X-Request-Id"]; len(v) > 0 {
		id = v[0]
	}
	if !validRequestID(id) {
		id = newRequestID()
	}
	setBaseHeaders(w.Header(), id)
	return r.WithContext(newRequestContext(r.Context(), id))
}

// setBaseHeaders sets what every response carries, including the answers
// written below the router (answers.go).
// The keys are spelled canonically and the values share one array (each
// a slice of capacity one, so an append elsewhere copies): one allocation
// where six Sets made six, on every request.
func setBaseHeaders(h http.Header, id string) {
	v := &[6]string{id, "nosniff", "no-store", "no-referrer", "DENY", apiCSP}
	h["X-Request-Id"] = v[0:1:1]
	h["X-Content-Type-Options"] = v[1:2:2]
	h["Cache-Control"] = v[2:3:3]
	h["Referrer-Policy"] = v[3:4:4]
	h["X-Frame-Options"] = v[4:5:5]
	h["Content-Security-Policy"] = v[5:6:6]
}

// observer is the pipeline's outer stages: the request's span
// (tracing.go), its metrics and access line, and the recovery from a
// panic. A nil tracer means no tracing.
type observer struct {
	log        *slog.Logger
	now        func() time.Time
	metrics    *metrics.Metrics
	tracer     trace.Tracer
	propagator propagation.TextMapPropagator
}

// recoverPanics turns a panic into a generic 500; the stack goes to the log
// only.
func (o *observer) recoverPanics(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) (err error) {
		defer func() {
			if r := recover(); r != nil {
				if r == http.ErrAbortHandler {
					panic(r)
				}
				o.log.Error("panic", "request_id", requestID(c), "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
				err = facade.ErrInternal
			}
		}()
		return next(c)
	}
}

// observe records metrics and one JSON access log line per request.
func (o *observer) observe(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := o.now()
		err := next(c)
		if err != nil {
			// Write the error now so the status below is the one sent.
			c.Error(err)
		}
		route := c.Path()
		if route == "" {
			route = "unmatched"
		}
		status := c.Response().Status
		elapsed := o.now().Sub(start)
		o.metrics.Request(route, methodLabel(c.Request().Method), status, elapsed)
		o.accessLine(c, route, status, elapsed)
		return nil
	}
}

// accessLine writes the request's one log line, with the audit record of
// the request (a denial, a grade change, a transfer) when there is one.
// Attributes are built as slog.Attr values (no key/value boxing) in a
// fixed-size array, and logged without the request's context: the request
// id is on the line already.
func (o *observer) accessLine(c echo.Context, route string, status int, elapsed time.Duration) {
	level := slog.LevelInfo
	if !o.log.Enabled(context.Background(), level) {
		return
	}
	ctx := c.Request().Context()
	var buf [16]slog.Attr
	attrs := append(buf[:0],
		slog.String("request_id", requestID(c)),
		slog.String("method", c.Request().Method),
		slog.String("route", route),
		slog.Int("status", status),
		slog.Float64("duration_ms", float64(elapsed.Microseconds())/1000),
		slog.String("principal", principal(c).ID))
	if rc := requestContextOf(ctx); rc != nil {
		if rc.traceID != "" {
			attrs = append(attrs, slog.String("trace_id", rc.traceID))
		}
		if event, more := rc.audit.take(); event != "" {
			attrs = append(attrs, slog.Bool("audit", true), slog.String("event", event))
			attrs = append(attrs, more...)
		}
	}
	// The record goes to the handler directly: Logger.LogAttrs would also
	// walk the stack for the caller's program counter, which no handler
	// of the service writes.
	rec := slog.NewRecord(o.now(), level, "request", 0) // the injected clock, as every record
	rec.AddAttrs(attrs...)
	_ = o.log.Handler().Handle(context.Background(), rec)
}

// methodLabel bounds the method label: callers choose the method, and an
// unbounded label would let anyone grow the metrics without limit.
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodOptions, http.MethodDelete, http.MethodPatch:
		return m
	}
	return "OTHER"
}

// requireXSRF enforces the anti-forgery rule on unsafe methods
// (auth.CheckXSRF): the header, equal to the XSRF-TOKEN cookie when one is
// sent, and the session's own token when the session cookie authenticated
// the request.
func requireXSRF(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := auth.CheckXSRF(c.Request(), identity(c)); err != nil {
			return err
		}
		return next(c)
	}
}

// requireJSONAccept answers 406 when the Accept header excludes JSON.
func requireJSONAccept(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if !acceptOf(c.Request()).admitsJSON() {
			return facade.ErrNotAcceptable
		}
		return next(c)
	}
}

// maxHeaderBytes is the service's own limit on a request's header block
// (request line included). The http.Server's limit is set well above it so
// that the service, not net/http, refuses oversize headers, with the same
// problem body and headers as every other error (limitHeaders).
const (
	maxHeaderBytes    = 16 << 10
	serverHeaderBytes = 64 << 10
)

// limitHeaders answers 431 when the request line and headers exceed
// maxHeaderBytes.
func limitHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if headerSize(c.Request()) > maxHeaderBytes {
			return facade.ErrHeadersTooLarge
		}
		return next(c)
	}
}

// headerSize counts the header block as it was on the wire: the request
// line, and "Name: value\r\n" for every header line.
func headerSize(r *http.Request) int {
	n := len(r.Method) + len(r.RequestURI) + len(r.Proto) + 4
	for k, vs := range r.Header {
		for _, v := range vs {
			n += len(k) + len(v) + 4
		}
	}
	return n + len(r.Host) + len("Host: \r\n")
}

// limitBody caps every request body at 16 KiB.
var limitBody = limitBodyTo(maxBody)

// limitBodyTo caps a route's request body at max bytes: a declared
// Content-Length above it is refused before anything is read, a body that
// grows past it fails its read (413 either way).
func limitBodyTo(max int64) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			r := c.Request()
			if r.ContentLength > max {
				return facade.ErrBodyTooLarge
			}
			if r.Body != http.NoBody { // net/http's body of a request without one
				r.Body = http.MaxBytesReader(c.Response(), r.Body, max)
			}
			return next(c)
		}
	}
}

// defaultWriteTimeout is how long a response may take to be written when
// Config.WriteTimeout is zero.
const defaultWriteTimeout = 30 * time.Second

// writeDeadlines bound how long a response may take to be written
// (Config.WriteTimeout).
type writeDeadlines struct{ timeout time.Duration }

// writeDeadline gives every response the timeout to be written, so a
// client that stops reading does not hold a connection and its goroutine.
func (d writeDeadlines) writeDeadline(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		setWriteDeadline(c.Response().Writer, time.Now().Add(d.timeout))
		return next(c)
	}
}

// streaming lets a download take as long as it needs while bytes flow:
// every write gets the timeout from its start, so only a reader that
// stalls for that long is cut off.
func (d writeDeadlines) streaming(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		w := c.Response().Writer
		c.Response().Writer = &extendingWriter{ResponseWriter: w, rc: http.NewResponseController(w), idle: d.timeout}
		return next(c)
	}
}

type extendingWriter struct {
	http.ResponseWriter
	rc   *http.ResponseController
	idle time.Duration
}

func (w *extendingWriter) Write(p []byte) (int, error) {
	_ = w.rc.SetWriteDeadline(time.Now().Add(w.idle))
	return w.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController (Echo's Flush) reach the connection.
func (w *extendingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// setWriteDeadline is http.NewResponseController(w).SetWriteDeadline(t)
// (the same search through Unwrap) without the controller's allocation.
func setWriteDeadline(w http.ResponseWriter, t time.Time) {
	for {
		switch u := w.(type) {
		case interface{ SetWriteDeadline(time.Time) error }:
			_ = u.SetWriteDeadline(t)
			return
		case interface{ Unwrap() http.ResponseWriter }:
			w = u.Unwrap()
		default:
			return
		}
	}
}
