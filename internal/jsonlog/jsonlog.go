// Package jsonlog is a slog.Handler that writes the lines slog.JSONHandler
// writes (the same keys, order and value encodings; a test compares the
// two) at a fraction of the cost: every request writes an access line, and
// on bench/run.sh's production path slog.JSONHandler was a visible share
// of a request's CPU. The savings: floats are formatted with strconv
// instead of a pooled json.Encoder, strings that need no escaping are
// copied as they are, attributes given to WithAttrs are encoded once, and
// no lock is held (each line is handed to the writer in one Write, so the
// writer must be safe for concurrent use, as logbuf.Writer and os.File
// are).
//
// WithGroup, which the service does not use, hands over to
// slog.JSONHandler, so grouped lines are exactly slog's too.
package jsonlog

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"math"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"
)

// Handler writes records at or above its level as JSON lines. Create one
// with New; the zero value is not usable.
type Handler struct {
	w     io.Writer
	level slog.Leveler
	now   func() time.Time
	attrs []slog.Attr // given to WithAttrs, for WithGroup's hand-over
	pre   []byte      // attrs, encoded, each starting with ','
}

// New returns a Handler writing to w; a nil level means slog.LevelInfo.
// Like slog.NewJSONHandler, whose output it matches, it takes its writer
// and level, not a Config (README, after the Layout table), and the clock
// its lines are stamped by: a record's time is now's, not the machine's
// clock slog.Logger read behind the caller's back, so a test that moves
// its clock sees its lines move with it. A nil now keeps the record's time.
func New(w io.Writer, level slog.Leveler, now func() time.Time) *Handler {
	if level == nil {
		level = slog.LevelInfo
	}
	return &Handler{w: w, level: level, now: now}
}

// Enabled reports whether records at l are written.
func (h *Handler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level.Level() }

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// Handle writes r as one line in one Write.
func (h *Handler) Handle(_ context.Context, r slog.Record) error {
	bp := bufPool.Get().(*[]byte)
	b := append((*bp)[:0], '{')
	if !r.Time.IsZero() { // a record without a time is written without one, as slog does
		at := r.Time
		if h.now != nil {
			at = h.now()
		}
		b = append(b, `"time":`...)
		b = appendTime(b, at)
		b = append(b, ',')
	}
	b = append(b, `"level":`...)
	b = appendString(b, r.Level.String())
	b = append(b, `,"msg":`...)
	b = appendString(b, r.Message)
	b = append(b, h.pre...)
	r.Attrs(func(a slog.Attr) bool {
		b = appendAttr(b, a)
		return true
	})
	b = append(b, '}', '\n')
	_, err := h.w.Write(b)
	if cap(b) <= 64<<10 { // a rare huge line's buffer is not kept
		*bp = b
		bufPool.Put(bp)
	}
	return err
}

// WithAttrs returns a handler whose lines carry as, encoded once here.
func (h *Handler) WithAttrs(as []slog.Attr) slog.Handler {
	if len(as) == 0 {
		return h
	}
	h2 := *h
	h2.attrs = append(h.attrs[:len(h.attrs):len(h.attrs)], as...)
	h2.pre = append([]byte(nil), h.pre...)
	for _, a := range as {
		h2.pre = appendAttr(h2.pre, a)
	}
	return &h2
}

// WithGroup hands over to slog.JSONHandler with the same writer, level and
// attributes.
func (h *Handler) WithGroup(name string) slog.Handler {
	return slog.NewJSONHandler(h.w, &slog.HandlerOptions{Level: h.level}).WithAttrs(h.attrs).WithGroup(name)
}

// appendAttr appends ',"key":value', or nothing for what slog leaves out:
// an empty attribute, and a group without attributes. A group with an
// empty key is written inline.
func appendAttr(b []byte, a slog.Attr) []byte {
	v := a.Value.Resolve()
	if a.Equal(slog.Attr{}) || (v.Kind() != slog.KindGroup && a.Key == "" && v.Equal(slog.Value{})) {
		return b
	}
	if v.Kind() == slog.KindGroup {
		as := v.Group()
		if a.Key == "" {
			for _, g := range as {
				b = appendAttr(b, g)
			}
			return b
		}
		mark := len(b)
		b = append(b, ',')
		b = appendString(b, a.Key)
		b = append(b, ':', '{')
		inner := len(b)
		for _, g := range as {
			b = appendAttr(b, g)
		}
		if len(b) == inner {
			return b[:mark]
		}
		b = append(b[:inner], b[inner+1:]...) // the first member's ','
		return append(b, '}')
	}
	b = append(b, ',')
	b = appendString(b, a.Key)
	b = append(b, ':')
	return appendValue(b, v)
}

// appendValue encodes v as slog.JSONHandler does.
func appendValue(b []byte, v slog.Value) []byte {
	switch v.Kind() {
	case slog.KindString:
		return appendString(b, v.String())
	case slog.KindInt64:
		return strconv.AppendInt(b, v.Int64(), 10)
	case slog.KindUint64:
		return strconv.AppendUint(b, v.Uint64(), 10)
	case slog.KindFloat64:
		return appendFloat(b, v.Float64())
	case slog.KindBool:
		return strconv.AppendBool(b, v.Bool())
	case slog.KindDuration:
		return strconv.AppendInt(b, int64(v.Duration()), 10)
	case slog.KindTime:
		return appendTime(b, v.Time())
	}
	a := v.Any()
	if err, ok := a.(error); ok {
		if _, marshals := a.(json.Marshaler); !marshals {
			return appendString(b, err.Error())
		}
	}
	return appendMarshal(b, a)
}

// appendFloat formats f as encoding/json does (slog.JSONHandler calls it):
// the shortest 'f' form, or outside [1e-6, 1e21) the 'e' form with e-09
// cut to e-9; NaN and infinities, which JSON cannot hold, go the slow way
// to get slog's error text.
func appendFloat(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return appendMarshal(b, f)
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	start := len(b)
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9
		if n := len(b) - start; n >= 4 && b[len(b)-4] == 'e' && b[len(b)-3] == '-' && b[len(b)-2] == '0' {
			b[len(b)-2] = b[len(b)-1]
			b = b[:len(b)-1]
		}
	}
	return b
}

// appendTime writes t as slog.JSONHandler does: RFC 3339 with nanoseconds,
// quoted.
func appendTime(b []byte, t time.Time) []byte {
	if y := t.Year(); y < 0 || y >= 10000 {
		return appendMarshal(b, t) // slog writes the error text; so does this
	}
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}

// appendMarshal is the slow path: encoding/json without HTML escaping, as
// slog.JSONHandler does; an error is written as slog writes it.
func appendMarshal(b []byte, a any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(a); err != nil {
		return appendString(b, "!ERROR:"+err.Error())
	}
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte{'\n'})...)
}

// appendString quotes s as slog.JSONHandler does: '"' and '\\' escaped,
// \n \r \t by name, other control bytes as \u00XX, invalid UTF-8 as
// \ufffd, U+2028 and U+2029 escaped, and nothing else (no HTML escaping).
// A string with none of these (ids, routes, methods) is copied as it is.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < utf8.RuneSelf && c != '"' && c != '\\' {
			i++
			continue
		}
		var esc string
		size := 1
		switch c {
		case '"', '\\':
			esc = string([]byte{'\\', c})
		case '\n':
			esc = `\n`
		case '\r':
			esc = `\r`
		case '\t':
			esc = `\t`
		default:
			if c < 0x20 {
				esc = `\u00` + string([]byte{hex[c>>4], hex[c&0xf]})
				break
			}
			var r rune
			r, size = utf8.DecodeRuneInString(s[i:])
			switch {
			case r == utf8.RuneError && size == 1:
				esc = `\ufffd`
			case r == '\u2028' || r == '\u2029':
				esc = `\u202` + string(hex[r&0xf])
			default:
				i += size
				continue
			}
		}
		b = append(b, s[start:i]...)
		b = append(b, esc...)
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

const hex = "0123456789abcdef"
