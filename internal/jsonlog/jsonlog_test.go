package jsonlog

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"math"
	"testing"
	"time"
)

// both writes r through slog.JSONHandler and through Handler (each after
// the same WithAttrs/WithGroup steps) and returns the two lines.
func both(t testing.TB, r slog.Record, wrap func(slog.Handler) slog.Handler) (want, got string) {
	t.Helper()
	var a, b bytes.Buffer
	var std slog.Handler = slog.NewJSONHandler(&a, &slog.HandlerOptions{Level: slog.LevelDebug})
	var fast slog.Handler = New(&b, slog.LevelDebug, nil)
	if wrap != nil {
		std, fast = wrap(std), wrap(fast)
	}
	_ = std.Handle(context.Background(), r.Clone())
	_ = fast.Handle(context.Background(), r.Clone())
	return a.String(), b.String()
}

type marshals struct{ N int }

func (m marshals) MarshalJSON() ([]byte, error) { return []byte(`{"n":1}`), nil }

type valuer struct{}

func (valuer) LogValue() slog.Value { return slog.StringValue("resolved") }

type errMarshals struct{}

func (errMarshals) Error() string                { return "as error" }
func (errMarshals) MarshalJSON() ([]byte, error) { return []byte(`"as json"`), nil }

// TestLinesAreSlogsLines: every kind of value the service logs (and the
// ones it might) comes out byte for byte as slog.JSONHandler writes it.
func TestLinesAreSlogsLines(t *testing.T) {
	at := time.Date(2026, 11, 23, 10, 21, 30, 123456000, time.UTC)
	cases := map[string][]slog.Attr{
		"access line": {slog.String("request_id", "0a1b2c"), slog.String("method", "GET"),
			slog.String("route", "/rs/account/:id/balance"), slog.Int("status", 200),
			slog.Float64("duration_ms", 0.731), slog.String("principal", "bench0001"),
			slog.Bool("audit", true), slog.String("event", "transfer"), slog.String("amount", "0.01")},
		"escapes":     {slog.String("s", "quote\" back\\ nl\n tab\t <html>&amp; \u2028 é 日本 \x01"), slog.String("bad utf8", "a\xffb")},
		"numbers":     {slog.Int64("neg", -42), slog.Uint64("big", math.MaxUint64), slog.Float64("tiny", 1.5e-9), slog.Float64("huge", 3e21), slog.Float64("zero", 0), slog.Float64("negz", math.Copysign(0, -1)), slog.Float64("int", 3), slog.Float64("e", 1e-7), slog.Float64("third", 1.0/3)},
		"not json":    {slog.Float64("nan", math.NaN()), slog.Float64("inf", math.Inf(1))},
		"durations":   {slog.Duration("d", 1500*time.Millisecond)},
		"times":       {slog.Time("t", at), slog.Time("local", at.In(time.FixedZone("x", 3600)))},
		"any":         {slog.Any("err", errors.New("boom \"x\"")), slog.Any("m", marshals{}), slog.Any("both", errMarshals{}), slog.Any("map", map[string]int{"a": 1}), slog.Any("nil", nil), slog.Any("bytes", []byte("hi"))},
		"valuer":      {slog.Any("v", valuer{})},
		"groups":      {slog.Group("g", slog.String("a", "1"), slog.Group("h", slog.Int("b", 2))), slog.Group("empty"), slog.Group("", slog.String("inline", "x")), slog.Group("g2", slog.Group("only-empty"))},
		"empty attrs": {{}, slog.String("", "kept"), slog.Any("", nil)},
		"empty key":   {slog.Int("", 0)},
	}
	for name, attrs := range cases {
		r := slog.NewRecord(at, slog.LevelInfo, "request \"msg\"", 0)
		r.AddAttrs(attrs...)
		if want, got := both(t, r, nil); got != want {
			t.Errorf("%s:\nslog: %s\nours: %s", name, want, got)
		}
	}
}

// TestHandlerStepsAreSlogs: WithAttrs (encoded once) and WithGroup (handed
// to slog) keep slog's lines; levels and a zero time too.
func TestHandlerStepsAreSlogs(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	steps := map[string]func(slog.Handler) slog.Handler{
		"attrs": func(h slog.Handler) slog.Handler {
			return h.WithAttrs([]slog.Attr{slog.String("service", "facade")}).WithAttrs([]slog.Attr{slog.Int("n", 1)})
		},
		"group": func(h slog.Handler) slog.Handler {
			return h.WithAttrs([]slog.Attr{slog.String("service", "facade")}).WithGroup("req").WithAttrs([]slog.Attr{slog.Int("n", 1)})
		},
		"no-op": func(h slog.Handler) slog.Handler { return h.WithAttrs(nil).WithGroup("") },
	}
	for name, step := range steps {
		for _, level := range []slog.Level{slog.LevelDebug, slog.LevelInfo, slog.LevelWarn, slog.LevelError, slog.LevelError + 2} {
			for _, when := range []time.Time{at, {}} {
				r := slog.NewRecord(when, level, "m", 0)
				r.AddAttrs(slog.String("k", "v"))
				if want, got := both(t, r, step); got != want {
					t.Errorf("%s %v:\nslog: %s\nours: %s", name, level, want, got)
				}
			}
		}
	}
}

func TestLevelFilters(t *testing.T) {
	h := New(&bytes.Buffer{}, slog.LevelWarn, nil)
	if h.Enabled(context.Background(), slog.LevelInfo) || !h.Enabled(context.Background(), slog.LevelWarn) {
		t.Fatal("a warn handler must drop info and keep warn")
	}
	if !New(&bytes.Buffer{}, nil, nil).Enabled(context.Background(), slog.LevelInfo) {
		t.Fatal("the default level is info")
	}
}

// FuzzStringsAreSlogs: any message, key and string value is escaped as
// slog escapes it.
func FuzzStringsAreSlogs(f *testing.F) {
	for _, s := range []string{"plain", "q\"", "\\", "\n\x00", "<&>", "\u2028\u2029", "é", "\xff\xfe", ""} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, key, val string) {
		r := slog.NewRecord(time.Unix(0, 0).UTC(), slog.LevelInfo, val, 0)
		r.AddAttrs(slog.String(key, val))
		if want, got := both(t, r, nil); got != want {
			t.Fatalf("\nslog: %q\nours: %q", want, got)
		}
	})
}

// BenchmarkAccessLine writes the service's access line through slog's
// handler and through this one, in the same run.
func BenchmarkAccessLine(b *testing.B) {
	for _, bc := range []struct {
		name string
		h    slog.Handler
	}{
		{"slog.JSONHandler", slog.NewJSONHandler(discard{}, nil)},
		{"jsonlog", New(discard{}, nil, nil)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			log := slog.New(bc.h)
			b.ReportAllocs()
			for b.Loop() {
				log.LogAttrs(context.Background(), slog.LevelInfo, "request",
					slog.String("request_id", "5f0c3a9d2b7e41c8a6d0e9f1"), slog.String("method", "POST"),
					slog.String("route", "/rs/transfer/from/:from/to/:to/amount/:amount"), slog.Int("status", 201),
					slog.Float64("duration_ms", 1.234), slog.String("principal", "bench0042"),
					slog.Bool("audit", true), slog.String("event", "transfer"), slog.String("transfer_id", "9b1f0c3a9d2b7e41c8a6d0e9f1a2b3c4"))
			}
		})
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// TestLinesAreStampedByTheClockHandedIn: a line's time is the clock's,
// whatever time slog.Logger read when it made the record, and a record
// without a time is written without one.
func TestLinesAreStampedByTheClockHandedIn(t *testing.T) {
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	var b bytes.Buffer
	log := slog.New(New(&b, nil, func() time.Time { return at }))
	log.Info("stamped")
	_ = log.Handler().Handle(context.Background(), slog.NewRecord(time.Time{}, slog.LevelInfo, "timeless", 0))
	want := `{"time":"2030-01-02T03:04:05Z","level":"INFO","msg":"stamped"}` + "\n" + `{"level":"INFO","msg":"timeless"}` + "\n"
	if b.String() != want {
		t.Errorf("lines\n%swant\n%s", b.String(), want)
	}
}
