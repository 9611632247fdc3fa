// Package parked counts the goroutines waiting inside a function, from
// the runtime's own stack dump. A test that must hold callers back until
// they have queued (say, inside redisdb.Combiner) waits for them this way,
// so the component needs no method that only tests would call.
package parked

import (
	"bytes"
	"runtime"
	"strings"
)

// In is how many goroutines are parked (on a channel, a lock, a sleep)
// with fn as their innermost frame outside the runtime. fn is a function
// as a stack trace names it, from its package's last path element:
// "redisdb.(*Combiner[...]).Do".
func In(fn string) int {
	n := 0
	for _, g := range bytes.Split(stacks(), []byte("\n\n")) {
		if innermost(string(g)) == fn {
			n++
		}
	}
	return n
}

// stacks is every goroutine's stack, as panic prints them.
func stacks() []byte {
	buf := make([]byte, 1<<16)
	for {
		if n := runtime.Stack(buf, true); n < len(buf) {
			return buf[:n]
		}
		buf = make([]byte, 2*len(buf))
	}
}

// innermost returns the first function of the stack g (a header line,
// then a function line and a file line per frame) that is not the
// runtime's, without its package path and arguments.
func innermost(g string) string {
	lines := strings.Split(g, "\n")
	for i := 1; i < len(lines); i += 2 {
		name := lines[i]
		if j := strings.LastIndex(name, "("); j > 0 {
			name = name[:j]
		}
		name = name[strings.LastIndex(name, "/")+1:]
		if !strings.HasPrefix(name, "runtime.") {
			return name
		}
	}
	return ""
}
