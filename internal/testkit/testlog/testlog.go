// Package testlog captures log output in tests: one goroutine-safe buffer
// that handlers, servers and background work may write to at once, so every
// test package reads logs the same way instead of keeping its own copy.
package testlog

import (
	"bytes"
	"sync"
)

// Buffer is an io.Writer safe for concurrent use; String returns all that
// was written so far.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
