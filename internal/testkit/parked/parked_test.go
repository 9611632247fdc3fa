package parked

import (
	"testing"
	"time"
)

type box[T any] struct{ ch chan T }

func (b *box[T]) wait() { <-b.ch }

func waitOn(ch chan struct{}) { <-ch }

// TestCountsTheGoroutinesWaitingInAFunction: goroutines waiting on a
// channel in a function, generic methods included, are counted by its
// name; once they return, they are not.
func TestCountsTheGoroutinesWaitingInAFunction(t *testing.T) {
	release := make(chan struct{})
	b := &box[int]{ch: make(chan int)}
	for range 3 {
		go waitOn(release)
	}
	go b.wait()
	until(t, func() bool { return In("parked.waitOn") == 3 && In("parked.(*box[...]).wait") == 1 })
	close(release)
	close(b.ch)
	until(t, func() bool { return In("parked.waitOn") == 0 && In("parked.(*box[...]).wait") == 0 })
}

func until(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not reached: waitOn %d, wait %d", In("parked.waitOn"), In("parked.(*box[...]).wait"))
		}
	}
}
