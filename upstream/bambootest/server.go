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
//
// Its methods come from small parts, each a type of its own: the
// catalogue of projects and plans (Catalogue), their builds (Builds), the
// injected faults (Faults) and the record of calls (CallLog); the routes
// are served by handlers, which read the same store.
type Server struct {
	// Handler serves the Bamboo routes; it is the Server itself, exposed
	// for code that mounts handlers by field. Do not replace it.
	Handler http.Handler

	*Catalogue
	*Builds
	*Faults
	*CallLog

	token string
	mux   *http.ServeMux
	links *links
	store *store
}

// links is the base URL written into documents' links.
type links struct {
	mu      sync.RWMutex
	baseURL string // without trailing slash; empty: derived from each request
}

// store is the catalogue's data, shared by Catalogue, Builds and the
// handlers.
type store struct {
	mu       sync.RWMutex // guards the data below
	projects []*project
	plans    map[string]*plan // every plan and branch by full key, so a large server finds one at once
	nextID   int64
}

// Catalogue adds and marks projects, plans and branches.
type Catalogue struct{ *store }

// Builds adds results and moves them through their life: labels,
// comments, issues, logs, tests, revisions.
type Builds struct{ *store }

// Faults are the misbehaviours injected into every request (FailNext,
// SetFailing, SetHang, SetGarbage, SetDelay, Redirect).
type Faults struct {
	mu        sync.Mutex
	faults    faults
	redirects map[string]string // escaped path -> Location, see Redirect
}

// CallLog records every request the server received (the latest
// maxRecorded).
type CallLog struct {
	mu    sync.Mutex
	calls []RecordedCall
}

// handlers serve the routes from the store.
type handlers struct {
	*store
	base    func(*http.Request) string
	pageCap int // the largest page served (WithPageCap); 0: no cap
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
type Option func(*options)

type options struct {
	token, baseURL string
	pageCap        int
}

// WithToken sets the bearer token the server requires.
func WithToken(token string) Option { return func(o *options) { o.token = token } }

// WithBaseURL sets the absolute base URL written into links
// ("http://bamboo.example:8085", or with a context path when the handler
// is mounted under one). Without it, links use the scheme and Host of
// each request, as Bamboo does behind no proxy.
func WithBaseURL(base string) Option {
	return func(o *options) { o.baseURL = strings.TrimSuffix(base, "/") }
}

// WithPageCap makes the server answer at most n items a page however
// many max-results asks for, with max-result saying how many it sent, as
// a server that limits page sizes does. Atlassian documents no such limit
// for Bamboo (only the default page of 25, and a warning that large pages
// are slow), so the default is none; tests use it to check that a client
// follows the pages it is given instead of the page it asked for.
func WithPageCap(n int) Option { return func(o *options) { o.pageCap = n } }

// New returns an empty server.
func New(opts ...Option) *Server {
	o := options{token: DefaultToken}
	for _, opt := range opts {
		opt(&o)
	}
	st := &store{nextID: 21365200, plans: map[string]*plan{}}
	s := &Server{
		Catalogue: &Catalogue{st}, Builds: &Builds{st}, Faults: &Faults{}, CallLog: &CallLog{},
		token: o.token, links: &links{baseURL: o.baseURL}, store: st,
	}
	h := &handlers{store: st, base: s.base, pageCap: o.pageCap}
	s.mux = h.routes()
	s.Handler = s
	return s
}

// SetBaseURL changes the base URL written into links (see WithBaseURL).
func (s *Server) SetBaseURL(base string) {
	s.links.mu.Lock()
	defer s.links.mu.Unlock()
	s.links.baseURL = strings.TrimSuffix(base, "/")
}

// ServeHTTP records the call, applies injected faults, checks the token and
// routes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.CallLog.record(r)
	if s.Faults.misbehave(w, r) {
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
	if to, ok := s.Faults.redirectFor(r.URL.EscapedPath()); ok {
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

func (s *Server) authorised(r *http.Request) bool {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(token), []byte(s.token)) == 1
}

// base is the absolute base URL for links in the response to r.
func (s *Server) base(r *http.Request) string {
	s.links.mu.RLock()
	defer s.links.mu.RUnlock()
	if s.links.baseURL != "" {
		return s.links.baseURL
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}
