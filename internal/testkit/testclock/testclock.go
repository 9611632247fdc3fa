// Package testclock is the clock tests hand to the parts that read the
// time, so a test moves time past a TTL instead of sleeping until it
// passes.
//
// Every such part follows one convention: it takes `Now func() time.Time`,
// nil meaning time.Now, as the Now field of the Config its constructor
// takes last (README, after the Layout table). The serve and demo
// commands hand all of them the same clock.
package testclock

import (
	"sync"
	"time"
)

// Clock is a settable clock safe for concurrent use. Its Now method value
// is what the parts take as their clock.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// New returns a clock at a fixed instant, so tests do not depend on the
// machine's time.
func New() *Clock { return &Clock{now: time.Unix(1_700_000_000, 0)} }

// Now is the clock's current time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// AdvancePast moves the clock to just after t (if t is still ahead).
func (c *Clock) AdvancePast(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.now) {
		c.now = t
	}
	c.now = c.now.Add(time.Millisecond)
}
