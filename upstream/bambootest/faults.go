package bambootest

import (
	"net/http"
	"time"
)

// Redirect makes requests for the escaped path from answer 302 with
// Location to (absolute, or relative to the server), after the token
// check, as a reverse proxy or a moved artifact would. An empty to removes
// the redirect.
func (s *Faults) Redirect(from, to string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.redirects == nil {
		s.redirects = map[string]string{}
	}
	if to == "" {
		delete(s.redirects, from)
		return
	}
	s.redirects[from] = to
}

func (s *Faults) redirectFor(path string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	to, ok := s.redirects[path]
	return to, ok
}

// FailNext makes the next n requests answer status with a Bamboo error body.
func (s *Faults) FailNext(n, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults.failNext, s.faults.failNextStatus = n, status
}

// SetFailing makes every request answer status until SetFailing(0).
func (s *Faults) SetFailing(status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults.failing = status
}

// SetHang(true) makes requests block until their client goes away;
// SetHang(false) releases the blocked ones, which then answer normally.
func (s *Faults) SetHang(hang bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case hang && s.faults.hangRelease == nil:
		s.faults.hangRelease = make(chan struct{})
	case !hang && s.faults.hangRelease != nil:
		close(s.faults.hangRelease)
		s.faults.hangRelease = nil
	}
}

// SetGarbage makes requests answer 200 with a body that is not JSON.
func (s *Faults) SetGarbage(garbage bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults.garbage = garbage
}

// SetDelay makes every request wait d (or until its client goes away)
// before answering; 0 turns it off. Useful to hold concurrent calls open.
func (s *Faults) SetDelay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults.delay = d
}

// misbehave applies the injected faults to r and reports whether it
// answered (or gave up on) the request.
func (s *Faults) misbehave(w http.ResponseWriter, r *http.Request) bool {
	s.mu.Lock()
	f := s.faults
	if s.faults.failNext > 0 {
		s.faults.failNext--
	}
	s.mu.Unlock()

	if f.delay > 0 && !wait(r, f.delay) {
		return true
	}
	if f.hangRelease != nil {
		select {
		case <-r.Context().Done():
			return true
		case <-f.hangRelease:
		}
	}
	switch {
	case f.failNext > 0:
		writeError(w, r, f.failNextStatus, "Injected failure.")
	case f.failing != 0:
		writeError(w, r, f.failing, "Injected failure.")
	case f.garbage:
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte("<html><body><h1>Bamboo is starting up</h1></body></html>\n"))
	default:
		return false
	}
	return true
}

func wait(r *http.Request, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}
