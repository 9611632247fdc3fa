// Package logbuf batches log lines into few writes: at thousands of
// requests a second, one write system call per access line is a visible
// share of the service's CPU (docs/performance.md, "internal/logbuf").
// Lines reach the underlying writer within Interval, whole and in order,
// and at once on Close.
//
// What a crash can lose: the lines of the last Interval (default 50 ms).
// The records that matter beyond the log (transfers, grade changes) are
// kept in Redis by the stores; the log is their second copy.
package logbuf

import (
	"io"
	"sync"
	"time"
)

// Writer is an io.Writer that buffers what it is given for at most
// interval, or until max bytes wait. Safe for concurrent use; each Write
// is kept whole (slog's handlers write one line per call).
type Writer struct {
	w        io.Writer
	interval time.Duration
	max      int

	mu     sync.Mutex
	buf    []byte
	armed  bool // a flush is scheduled
	closed bool

	flushMu sync.Mutex // one flush at a time, so lines keep their order
	spare   []byte     // the last flushed buffer, reused

	// after runs f once d has passed (time.AfterFunc; tests run it when
	// they choose).
	after func(d time.Duration, f func())
}

// New returns a Writer on w flushing at least every interval and whenever
// max bytes wait. A building block with required sizes, like
// bufio.NewWriterSize, it takes no Config (README, after the Layout table).
func New(w io.Writer, interval time.Duration, max int) *Writer {
	return &Writer{w: w, interval: interval, max: max, buf: make([]byte, 0, max),
		after: func(d time.Duration, f func()) { time.AfterFunc(d, f) }}
}

// backlog: how many times max may wait while a flush is writing before a
// Write waits for it, so that a stalled disk slows requests down instead
// of growing memory without bound.
const backlog = 4

// Write buffers p; it never fails (a failing underlying writer loses the
// batch, as an unbuffered one would lose the line). It does not wait for
// a write in progress: when the buffer is full, the Write that finds no
// flush running writes it; while one runs, lines gather for the next
// (up to backlog times max), so that a request goroutine never waits on
// another's write: two goroutines that wait on every full buffer serve
// fewer lists than one (docs/performance.md, "internal/logbuf").
func (b *Writer) Write(p []byte) (int, error) {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return b.w.Write(p)
	}
	b.buf = append(b.buf, p...)
	n := len(b.buf)
	if n < b.max && !b.armed {
		b.armed = true
		b.after(b.interval, b.Flush)
	}
	b.mu.Unlock()
	switch {
	case n < b.max:
	case n >= backlog*b.max:
		b.Flush()
	case b.flushMu.TryLock():
		b.flushLocked()
		b.flushMu.Unlock()
	}
	return len(p), nil
}

// Flush writes what waits.
func (b *Writer) Flush() {
	b.flushMu.Lock()
	defer b.flushMu.Unlock()
	b.flushLocked()
}

// flushLocked writes what waits, again while the lines that gathered
// during a write fill the buffer, and leaves the timer armed for the rest
// (no Write may come to flush them). flushMu is held.
func (b *Writer) flushLocked() {
	for {
		b.mu.Lock()
		data := b.buf
		b.buf = b.spare[:0]
		b.armed = false
		b.mu.Unlock()
		if len(data) > 0 {
			_, _ = b.w.Write(data)
		}
		b.spare = data
		b.mu.Lock()
		n := len(b.buf)
		if n > 0 && n < b.max && !b.armed && !b.closed {
			b.armed = true
			b.after(b.interval, b.Flush)
		}
		b.mu.Unlock()
		if n < b.max {
			return
		}
	}
}

// Close flushes and makes later writes go straight through.
func (b *Writer) Close() error {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	b.Flush()
	return nil
}
