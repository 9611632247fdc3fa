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
