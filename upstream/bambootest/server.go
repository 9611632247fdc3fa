// Package bambootest is a Bamboo-compatible HTTP server: the REST endpoints
// the facade proxies (/rest/api/latest/project, /rest/api/latest/result/
// {PROJ-PLAN}) with Bamboo's exact JSON shapes, paging and expansion, and
// the artifact download routes (/browse/... and /download/...).
//
// It is the upstream of tests across packages (with fault injection and a
// record of every call) and the built-in upstream of `facade demo`, so it
// is ordinary, production-quality code: safe for concurrent use, bounded in
// memory (large artifacts are generated while they are sent, the call
// record keeps the latest calls only).
package bambootest

import (
	"crypto/subtle"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// DefaultToken is the bearer token the server accepts unless WithToken
// says otherwise.
const DefaultToken = "bamboo-service-token"

// maxRecorded bounds the call record: a long demo run must not grow it.
const maxRecorded = 10000

// Server is an in-memory Bamboo. Create it with New; fill it with
// AddProject, AddPlan, AddResult or DemoData; serve it as an http.Handler.
type Server struct {
	// Handler serves the Bamboo routes; it is the Server itself, exposed
	// for code that mounts handlers by field. Do not replace it.
	Handler http.Handler

	token   string
	mux     *http.ServeMux
	baseMu  sync.RWMutex
	baseURL string // without trailing slash; empty: derived from each request

	// pageCap is the largest page served (WithPageCap); 0: no cap.
	pageCap int

	mu       sync.RWMutex // guards the data below
	projects []*project
	plans    map[string]*plan // every plan and branch by full key, so a large server finds one at once
	nextID   int64

	faultMu   sync.Mutex
	faults    faults
	redirects map[string]string // escaped path -> Location, see Redirect

	callMu sync.Mutex
	calls  []RecordedCall
}

// faults are the injected misbehaviours, applied in this order: delay,
// hang, failNext, failing, garbage.
type faults struct {
	delay          time.Duration
	hangRelease    chan struct{} // non-nil while hanging; closed to release
	failNext       int
	failNextStatus int
	failing        int
	garbage        bool
}

// RecordedCall is one request as the server received it.
type RecordedCall struct {
	Method      string
	Path        string // decoded
	EscapedPath string // as sent
	RawQuery    string
	Header      http.Header
}

// Option configures a Server.
type Option func(*Server)

// WithToken sets the bearer token the server requires.
func WithToken(token string) Option { return func(s *Server) { s.token = token } }

// WithBaseURL sets the absolute base URL written into links
// ("http://bamboo.example:8085", or with a context path when the handler
// is mounted under one). Without it, links use the scheme and Host of
// each request, as Bamboo does behind no proxy.
func WithBaseURL(base string) Option {
	return func(s *Server) { s.baseURL = strings.TrimSuffix(base, "/") }
}

// WithPageCap makes the server answer at most n items a page however
// many max-results asks for, with max-result saying how many it sent, as
// a server that limits page sizes does. Atlassian documents no such limit
// for Bamboo (only the default page of 25, and a warning that large pages
// are slow), so the default is none; tests use it to check that a client
// follows the pages it is given instead of the page it asked for.
func WithPageCap(n int) Option { return func(s *Server) { s.pageCap = n } }

// New returns an empty server.
func New(opts ...Option) *Server {
	s := &Server{token: DefaultToken, nextID: 21365200, plans: map[string]*plan{}}
	for _, opt := range opts {
		opt(s)
	}
	s.mux = s.routes()
	s.Handler = s
	return s
}

// SetBaseURL changes the base URL written into links (see WithBaseURL).
func (s *Server) SetBaseURL(base string) {
	s.baseMu.Lock()
	defer s.baseMu.Unlock()
	s.baseURL = strings.TrimSuffix(base, "/")
}

// ServeHTTP records the call, applies injected faults, checks the token and
// routes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.record(r)
	if s.misbehave(w, r) {
		return
	}
	if r.URL.Path == loginPath {
		s.loginPage(w, r)
		return
	}
	if !s.authorised(r) {
		s.refuseUnauthenticated(w, r)
		return
	}
	if to, ok := s.redirectFor(r.URL.EscapedPath()); ok {
		http.Redirect(w, r, to, http.StatusFound)
		return
	}
	s.mux.ServeHTTP(w, r)
}

// loginPath is Bamboo's login page.
const loginPath = "/userlogin!doDefault.action"

// refuseUnauthenticated answers as Bamboo does: the REST API with 401 and
// an error document, every other page (artifacts, logs) with a redirect to
// the login page.
func (s *Server) refuseUnauthenticated(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/rest/") {
		writeError(w, r, http.StatusUnauthorized, "Client must be authenticated to access this resource.")
		return
	}
	http.Redirect(w, r, s.base(r)+loginPath+"?os_destination="+url.QueryEscape(r.URL.RequestURI()), http.StatusFound)
}

// loginPage is Bamboo's login form: HTML naming the server and its version.
func (s *Server) loginPage(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html;charset=UTF-8")
	_, _ = fmt.Fprintf(w, `<!DOCTYPE html><html><head><title>Log in as a Bamboo user - Atlassian Bamboo</title></head>
<body><form action="%s/userlogin.action" method="post"><input name="os_username"><input name="os_password" type="password"></form>
<footer>Powered by Atlassian Bamboo version %s</footer></body></html>
`, html.EscapeString(s.base(r)), Version)
}

// Version is the Bamboo version the server's pages claim.
const Version = "9.6.2 build 90610"

// Redirect makes requests for the escaped path from answer 302 with
// Location to (absolute, or relative to the server), after the token
// check, as a reverse proxy or a moved artifact would. An empty to removes
// the redirect.
func (s *Server) Redirect(from, to string) {
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	if s.redirects == nil {
		s.redirects = map[string]string{}
	}
	if to == "" {
		delete(s.redirects, from)
		return
	}
	s.redirects[from] = to
}

func (s *Server) redirectFor(path string) (string, bool) {
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	to, ok := s.redirects[path]
	return to, ok
}

func (s *Server) authorised(r *http.Request) bool {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(token), []byte(s.token)) == 1
}

// base is the absolute base URL for links in the response to r.
func (s *Server) base(r *http.Request) string {
	s.baseMu.RLock()
	defer s.baseMu.RUnlock()
	if s.baseURL != "" {
		return s.baseURL
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// FailNext makes the next n requests answer status with a Bamboo error body.
func (s *Server) FailNext(n, status int) {
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	s.faults.failNext, s.faults.failNextStatus = n, status
}

// SetFailing makes every request answer status until SetFailing(0).
func (s *Server) SetFailing(status int) {
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	s.faults.failing = status
}

// SetHang(true) makes requests block until their client goes away;
// SetHang(false) releases the blocked ones, which then answer normally.
func (s *Server) SetHang(hang bool) {
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	switch {
	case hang && s.faults.hangRelease == nil:
		s.faults.hangRelease = make(chan struct{})
	case !hang && s.faults.hangRelease != nil:
		close(s.faults.hangRelease)
		s.faults.hangRelease = nil
	}
}

// SetGarbage makes requests answer 200 with a body that is not JSON.
func (s *Server) SetGarbage(garbage bool) {
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	s.faults.garbage = garbage
}

// SetDelay makes every request wait d (or until its client goes away)
// before answering; 0 turns it off. Useful to hold concurrent calls open.
func (s *Server) SetDelay(d time.Duration) {
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	s.faults.delay = d
}

// misbehave applies the injected faults to r and reports whether it
// answered (or gave up on) the request.
func (s *Server) misbehave(w http.ResponseWriter, r *http.Request) bool {
	s.faultMu.Lock()
	f := s.faults
	if s.faults.failNext > 0 {
		s.faults.failNext--
	}
	s.faultMu.Unlock()

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

func (s *Server) record(r *http.Request) {
	call := RecordedCall{
		Method: r.Method, Path: r.URL.Path, EscapedPath: r.URL.EscapedPath(),
		RawQuery: r.URL.RawQuery, Header: r.Header.Clone(),
	}
	s.callMu.Lock()
	defer s.callMu.Unlock()
	if len(s.calls) >= maxRecorded {
		s.calls = append(s.calls[:0], s.calls[len(s.calls)-maxRecorded/2:]...)
	}
	s.calls = append(s.calls, call)
}

// Calls returns the recorded calls, oldest first (the latest few thousand).
func (s *Server) Calls() []RecordedCall {
	s.callMu.Lock()
	defer s.callMu.Unlock()
	return append([]RecordedCall(nil), s.calls...)
}

// CallCount is the number of recorded calls whose decoded path starts
// with pathPrefix.
func (s *Server) CallCount(pathPrefix string) int {
	s.callMu.Lock()
	defer s.callMu.Unlock()
	n := 0
	for _, c := range s.calls {
		if strings.HasPrefix(c.Path, pathPrefix) {
			n++
		}
	}
	return n
}

// ResetCalls forgets the recorded calls.
func (s *Server) ResetCalls() {
	s.callMu.Lock()
	defer s.callMu.Unlock()
	s.calls = nil
}
