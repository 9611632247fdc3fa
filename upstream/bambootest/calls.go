package bambootest

import (
	"net/http"
	"strings"
)

func (s *CallLog) record(r *http.Request) {
	call := RecordedCall{
		Method: r.Method, Path: r.URL.Path, EscapedPath: r.URL.EscapedPath(),
		RawQuery: r.URL.RawQuery, Header: r.Header.Clone(),
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.calls) >= maxRecorded {
		s.calls = append(s.calls[:0], s.calls[len(s.calls)-maxRecorded/2:]...)
	}
	s.calls = append(s.calls, call)
}

// Calls returns the recorded calls, oldest first (the latest few thousand).
func (s *CallLog) Calls() []RecordedCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]RecordedCall(nil), s.calls...)
}

// CallCount is the number of recorded calls whose decoded path starts
// with pathPrefix.
func (s *CallLog) CallCount(pathPrefix string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.calls {
		if strings.HasPrefix(c.Path, pathPrefix) {
			n++
		}
	}
	return n
}

// ResetCalls forgets the recorded calls.
func (s *CallLog) ResetCalls() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = nil
}
