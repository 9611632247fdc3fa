package jsonlog

import (
	"bytes"
	"context"
	"log/slog"
	"testing"
	"time"
)

func TestLevelFilters(t *testing.T) {
	h := New(&bytes.Buffer{}, slog.LevelWarn, nil)
	if h.Enabled(context.Background(), slog.LevelInfo) || !h.Enabled(context.Background(), slog.LevelWarn) {
		t.Fatal("a warn handler must drop info and keep warn")
	}
	if !New(&bytes.Buffer{}, nil, nil).Enabled(context.Background(), slog.LevelInfo) {
		t.Fatal("the default level is info")
	}
}

// TestLinesAreStampedByTheClockHandedIn: a line's time is the clock's,
// whatever time slog.Logger read when it made the record, also through
// With and WithGroup, and a record without a time is written without one.
func TestLinesAreStampedByTheClockHandedIn(t *testing.T) {
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	var b bytes.Buffer
	log := slog.New(New(&b, nil, func() time.Time { return at }))
	log.Info("stamped")
	log.With("k", "v").WithGroup("g").Info("grouped", "n", 1)
	_ = log.Handler().Handle(context.Background(), slog.NewRecord(time.Time{}, slog.LevelInfo, "timeless", 0))
	want := `{"time":"2030-01-02T03:04:05Z","level":"INFO","msg":"stamped"}` + "\n" +
		`{"time":"2030-01-02T03:04:05Z","level":"INFO","msg":"grouped","k":"v","g":{"n":1}}` + "\n" +
		`{"level":"INFO","msg":"timeless"}` + "\n"
	if b.String() != want {
		t.Errorf("lines\n%swant\n%s", b.String(), want)
	}
}
