package bambootest

import "net/http/httptest"

// TB is the part of testing.TB that NewTestServer uses (so that this
// package, which the demo binary links, does not import testing).
type TB interface {
	Helper()
	Cleanup(func())
}

// NewTestServer starts the server on a loopback port for one test. Links
// in its documents use the test server's URL unless WithBaseURL says
// otherwise. When the test ends, hung requests are released and the
// server is closed.
func NewTestServer(tb TB, opts ...Option) (*Server, *httptest.Server) {
	tb.Helper()
	s := New(opts...)
	ts := httptest.NewServer(s)
	if s.links.baseURL == "" {
		s.SetBaseURL(ts.URL)
	}
	tb.Cleanup(ts.Close)
	tb.Cleanup(func() { s.SetHang(false) }) // runs first: lets Close finish
	return s, ts
}
