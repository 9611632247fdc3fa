package logbuf

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer records what reaches the underlying writer, write by write.
type lockedBuffer struct {
	mu     sync.Mutex
	b      bytes.Buffer
	writes int
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.writes++
	return l.b.Write(p)
}

func (l *lockedBuffer) snapshot() (string, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String(), l.writes
}

func TestLinesArriveWithinTheIntervalInFewWrites(t *testing.T) {
	var out lockedBuffer
	w := New(&out, 30*time.Millisecond, 1<<20)
	// The timer is the test's: it fires when the test says the interval
	// has passed, so a slow machine cannot make 100 writes straddle it.
	var scheduled []func()
	w.after = func(d time.Duration, f func()) {
		if d != 30*time.Millisecond {
			t.Errorf("flush scheduled after %s, want the interval", d)
		}
		scheduled = append(scheduled, f)
	}
	for i := range 100 {
		fmt.Fprintf(w, "line %d\n", i)
	}
	if s, _ := out.snapshot(); s != "" {
		t.Fatalf("written before the interval: %q", s)
	}
	if len(scheduled) != 1 {
		t.Fatalf("%d flushes scheduled for 100 lines within one interval, want 1", len(scheduled))
	}
	scheduled[0]()
	s, writes := out.snapshot()
	if strings.Count(s, "\n") != 100 || !strings.HasPrefix(s, "line 0\n") || !strings.HasSuffix(s, "line 99\n") {
		t.Fatalf("after the interval: %q", s)
	}
	if writes != 1 {
		t.Fatalf("%d writes for 100 lines within one interval, want 1", writes)
	}
	// The next line arms the timer again.
	fmt.Fprintf(w, "line 100\n")
	if len(scheduled) != 2 {
		t.Fatalf("a line after a flush scheduled %d flushes in all, want 2", len(scheduled))
	}
}

// TestTheRealTimerFlushes: with the real timer, a line arrives without a
// Flush or Close (waiting for it, however long the machine takes).
func TestTheRealTimerFlushes(t *testing.T) {
	var out lockedBuffer
	w := New(&out, time.Millisecond, 1<<20)
	fmt.Fprintf(w, "only line\n")
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if s, _ := out.snapshot(); s == "only line\n" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the line never arrived")
		}
	}
}

func TestFullBufferAndCloseFlushAtOnce(t *testing.T) {
	var out lockedBuffer
	w := New(&out, time.Hour, 64)
	line := strings.Repeat("x", 40) + "\n"
	w.Write([]byte(line))
	w.Write([]byte(line)) // 82 bytes >= 64
	if s, _ := out.snapshot(); s != line+line {
		t.Fatalf("full buffer not flushed: %q", s)
	}
	w.Write([]byte("last\n"))
	w.Close()
	if s, _ := out.snapshot(); !strings.HasSuffix(s, "last\n") {
		t.Fatalf("Close did not flush: %q", s)
	}
	w.Write([]byte("after\n"))
	if s, _ := out.snapshot(); !strings.HasSuffix(s, "after\n") {
		t.Fatalf("write after Close not passed through: %q", s)
	}
}

func TestConcurrentLinesStayWholeAndInOrderPerWriter(t *testing.T) {
	var out lockedBuffer
	w := New(&out, time.Millisecond, 512)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				fmt.Fprintf(w, "g%d-%04d\n", g, i)
			}
		}()
	}
	wg.Wait()
	w.Close()
	s, _ := out.snapshot()
	next := map[string]int{}
	for _, l := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		var g string
		var i int
		if _, err := fmt.Sscanf(l, "%2s-%d", &g, &i); err != nil || len(l) != 7 {
			t.Fatalf("torn line %q", l)
		}
		if i != next[g] {
			t.Fatalf("%s: line %d after %d", g, i, next[g]-1)
		}
		next[g]++
	}
	if len(next) != 8 {
		t.Fatalf("lines from %d writers, want 8", len(next))
	}
}

// blockingWriter holds every write until the test releases it.
type blockingWriter struct {
	lockedBuffer
	entered chan struct{}
	release chan struct{}
}

func (b *blockingWriter) Write(p []byte) (int, error) {
	b.entered <- struct{}{}
	<-b.release
	return b.lockedBuffer.Write(p)
}

// TestAFullBufferDoesNotWaitForAWriteInProgress: while one full buffer is
// being written (a slow disk), the lines that fill the next one are kept
// without their writers waiting, and reach the file in order once the
// write ends, with no further Write or timer to push them.
func TestAFullBufferDoesNotWaitForAWriteInProgress(t *testing.T) {
	out := &blockingWriter{entered: make(chan struct{}), release: make(chan struct{})}
	w := New(out, time.Hour, 64)
	w.after = func(time.Duration, func()) {} // no timer: only the flushes the writes start
	line := strings.Repeat("x", 39) + "\n"
	first := make(chan struct{})
	go func() {
		w.Write([]byte("1" + line))
		w.Write([]byte("2" + line)) // full: this Write writes, and blocks in the file
		close(first)
	}()
	<-out.entered
	done := make(chan struct{})
	go func() {
		w.Write([]byte("3" + line))
		w.Write([]byte("4" + line)) // full again, while the first write is held
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a Write waited for another's write to the file")
	}
	close(out.release) // the held write ends; the lines gathered meanwhile follow
	go func() {
		for range out.entered {
		}
	}()
	<-first
	s, _ := out.snapshot()
	if want := "1" + line + "2" + line + "3" + line + "4" + line; s != want {
		t.Fatalf("the file holds %q, want %q", s, want)
	}
	close(out.entered)
}

// TestAStalledFileSlowsWritersDown: past backlog full buffers waiting on
// a write that does not end, a Write waits instead of holding more.
func TestAStalledFileSlowsWritersDown(t *testing.T) {
	out := &blockingWriter{entered: make(chan struct{}, 100), release: make(chan struct{})}
	w := New(out, time.Hour, 64)
	w.after = func(time.Duration, func()) {}
	line := strings.Repeat("x", 63) + "\n"
	go w.Write([]byte(line)) // full: writes, and stalls in the file
	<-out.entered
	returned := make(chan int, 10)
	go func() {
		for i := range 10 {
			w.Write([]byte(line))
			returned <- i
		}
	}()
	deadline := time.After(200 * time.Millisecond)
	held := 0
wait:
	for {
		select {
		case <-returned:
			held++
		case <-deadline:
			break wait
		}
	}
	if held != backlog-1 {
		t.Errorf("%d writes of a full buffer each returned while the file stalled, want %d (then the next waits)", held, backlog-1)
	}
	close(out.release)
	for held < 10 {
		<-returned
		held++
	}
	w.Close()
	if s, _ := out.snapshot(); strings.Count(s, "\n") != 11 {
		t.Fatalf("%d of 11 lines reached the file", strings.Count(s, "\n"))
	}
}
