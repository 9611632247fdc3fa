package server

import (
	"context"
	"log/slog"
	"sync"
)

// LogHandler wraps h so that every record logged with a request's context
// carries that request's id (and its trace_id when it has one), and so that the audit record a store or the
// authorizer logs during a request (a denial, a grade change, a transfer:
// records with audit=true) is written on the request's one access line
// instead of a line of its own. Outside a request (seeding, tests of a
// store alone) audit records are written as they come.
func LogHandler(h slog.Handler) slog.Handler { return ctxHandler{h} }

type ctxHandler struct{ slog.Handler }

func (h ctxHandler) Handle(ctx context.Context, r slog.Record) error {
	rc := requestContextOf(ctx)
	if rc == nil {
		return h.Handler.Handle(ctx, r)
	}
	if rc.audit.fold(r) {
		return nil
	}
	if !hasAttr(r, "request_id") { // the error handler names it itself (server/problem)
		r.AddAttrs(slog.String("request_id", rc.id))
	}
	if rc.traceID != "" {
		r.AddAttrs(slog.String("trace_id", rc.traceID))
	}
	return h.Handler.Handle(ctx, r)
}

func hasAttr(r slog.Record, key string) bool {
	found := false
	r.Attrs(func(a slog.Attr) bool {
		found = a.Key == key
		return !found
	})
	return found
}

func (h ctxHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return ctxHandler{h.Handler.WithAttrs(as)}
}
func (h ctxHandler) WithGroup(name string) slog.Handler { return ctxHandler{h.Handler.WithGroup(name)} }

// requestAudit holds the audit record of one request until its access
// line is written.
type requestAudit struct {
	mu    sync.Mutex
	event string      // the audit record's message: "transfer", "authorization denied", ...
	attrs []slog.Attr // its attributes, without audit=true and principal (the access line has both)
	done  bool        // the access line is written: later records go on their own lines
}

// fold keeps r for the access line when it is an info-level audit record
// and the first of its request; errors and a second record are written on
// their own lines.
func (a *requestAudit) fold(r slog.Record) bool {
	if r.Level != slog.LevelInfo || !isAudit(r) {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.done || a.event != "" {
		return false
	}
	a.event = r.Message
	a.attrs = make([]slog.Attr, 0, r.NumAttrs())
	r.Attrs(func(at slog.Attr) bool {
		if at.Key != "audit" && at.Key != "principal" {
			a.attrs = append(a.attrs, at)
		}
		return true
	})
	return true
}

// take returns the folded record (event "" when there is none) and closes
// the request to further folding.
func (a *requestAudit) take() (string, []slog.Attr) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.done = true
	return a.event, a.attrs
}

func isAudit(r slog.Record) bool {
	audit := false
	r.Attrs(func(at slog.Attr) bool {
		if at.Key == "audit" {
			audit = at.Value.Kind() == slog.KindBool && at.Value.Bool()
			return false
		}
		return true
	})
	return audit
}
