// Package proxy holds the build routes (docs/build-routes.md):
// Bamboo's read API (projects, plans, branches, results, job results) and
// artifact downloads, answered from the upstream Bamboo server through the
// shared response cache and filtered for the calling principal. Each route
// is one entry of the table in routes.go; endpoints.go lists its paths for
// the server's router, which passes each request's parameters to Read,
// Favourite or Download (this package knows no HTTP framework and writes
// no response).
//
// The order of work in every handler is docs/build-routes.md's: parse and validate
// (400), authorize from the identifiers alone (403, identical whether the
// plan exists or not), and only then touch the cache or the upstream. The
// key is parsed once, into a facade.BuildKey whose shape picks the route,
// and goes to the upstream client as it is.
//
// Along its seams:
//
//   - the route table and its parsing: routes.go (the table), endpoints.go
//     (its paths), serve.go (the key), ident.go (artifact paths), query.go
//     (paging, expand and filters, validated);
//   - upstream documents: collect.go (whole lists read page by page),
//     documents.go (the shared cache, and the one cache in process: each
//     document with what is made of it), freshness.go (how long each
//     document is kept);
//   - the views: views.go (what each principal sees of a document,
//     encoded), index.go and lists.go (the project list and collected
//     lists taken apart), links.go and jsonio.go (link rewriting, decoding
//     and encoding);
//   - the Handler (proxy.go, serve.go, projects.go, favourites.go,
//     artifact.go, livelog.go) ties them together per request.
//
// One cache in process sits in front of Redis (documents.go): the
// documents read lately, each with what is made of it, dropped together.
// A document is served from memory until StoredAt+FreshFor (the freshness
// the shared cache applies, which a document's state decides: freshness.go;
// see Config.CacheTTL), so a warm request costs no Redis round trip. Made
// of it, once per version: its parsed form (upstream JSON is decoded once
// per miss, by the fill that fetched it, and once per version read from
// Redis by another instance), which projects and plans each principal may
// see, and the encoded views with their ETags (a team's members share one
// body), keyed by the policy's version (bumped on every reload), the
// principal, the public base URL, the expansion and the paging. A new
// upstream document or a policy reload is seen at once.
package proxy

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/authz"
	"github.com/facade-dev/facade/cache"
	"github.com/facade-dev/facade/internal/etag"
	"github.com/facade-dev/facade/internal/tracing"
	"github.com/facade-dev/facade/upstream"
)

// Defaults for the zero Config fields.
const (
	DefaultViewCacheEntries = 4096
	DefaultViewCacheBytes   = 64 << 20
	DefaultL1Window         = time.Second
	// maxDocuments bounds the documents held in process: one per project
	// list and per result page recently asked for; docBytes bounds their
	// bytes and parsed forms.
	maxDocuments = 1024
	docBytes     = 64 << 20
)

// Config tunes a Handler. The zero Config works: every field documents
// what its zero value means.
type Config struct {
	// PublicURL is the facade's external base URL (FACADE_PUBLIC_URL), used
	// in every rewritten link. Empty: derived per request from the
	// connection's scheme (TLS or not) and the Host header; X-Forwarded-*
	// headers are not trusted.
	PublicURL string
	// ViewCacheEntries bounds the views held in process: up to 16 times
	// as many callers and queries (principals who see the same things
	// share one body). Zero means DefaultViewCacheEntries.
	ViewCacheEntries int
	// ViewCacheBytes bounds the views' bodies by size (a view of a large
	// project list can be megabytes). Zero means DefaultViewCacheBytes.
	ViewCacheBytes int64
	// CacheTTL should be the shared cache's TTL (FACADE_CACHE_TTL): an
	// entry read from Redis is then reused in process until
	// StoredAt+FreshFor (the entry's own lifetime: freshness.go), exactly
	// as long as Redis would call it fresh. Zero means the cache's clock
	// is not known to be this one: an entry is reused for at most
	// DefaultL1Window after it was read. Negative disables the in-process
	// copy (every request reads Redis).
	CacheTTL time.Duration
	// FinishedTTL is how long a finished build result is kept
	// (FACADE_CACHE_FINISHED): it never changes again. Zero means
	// DefaultFinishedTTL.
	FinishedTTL time.Duration
	// LiveInterval is how often a queued or running result, and a list
	// holding one, is asked upstream while it is read
	// (FACADE_LIVE_INTERVAL). Zero means DefaultLiveInterval.
	LiveInterval time.Duration
	// Favourites keeps each person's favourite plans (package
	// favourites). Nil: nobody has favourites, and marking one fails.
	Favourites Favourites
	// Now is the clock the in-process copies expire by; pass the shared
	// cache's (cache.Config.Now), so both judge freshness alike. Nil means
	// time.Now.
	Now func() time.Time
	// Log receives the warnings that an upstream list was truncated; nil
	// means slog.Default().
	Log *slog.Logger
}

// Handler serves the build-result routes. Create it with New; it is safe
// for concurrent use.
type Handler struct {
	cfg   Config
	up    *upstream.Client
	az    *authz.Authorizer
	log   *slog.Logger
	docs  *documents // upstream documents: the shared cache, and the one cache in process
	vm    viewMaker  // what each principal sees of them, encoded
	col   *collector // whole lists read from upstream
	fresh freshness  // how long each document is kept

	fetchProjects fetchFunc                   // h.col.fetchAllProjects, bound once
	lastBase      atomic.Pointer[derivedBase] // the last base derived from a request
}

// derivedBase remembers one derived public base, so that the common case
// (every request names the same host) builds no string.
type derivedBase struct {
	host string
	tls  bool
	base string
}

// New returns the handlers on up, c and az, all three required, tuned by
// cfg.
func New(up *upstream.Client, c *cache.Cache, az *authz.Authorizer, cfg Config) *Handler {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.ViewCacheEntries <= 0 {
		cfg.ViewCacheEntries = DefaultViewCacheEntries
	}
	if cfg.ViewCacheBytes <= 0 {
		cfg.ViewCacheBytes = DefaultViewCacheBytes
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.FinishedTTL <= 0 {
		cfg.FinishedTTL = DefaultFinishedTTL
	}
	if cfg.LiveInterval <= 0 {
		cfg.LiveInterval = DefaultLiveInterval
	}
	if cfg.Favourites == nil {
		cfg.Favourites = noFavourites{}
	}
	cfg.PublicURL = strings.TrimRight(cfg.PublicURL, "/")
	h := &Handler{
		cfg: cfg, up: up, az: az, log: cfg.Log,
		docs:  newDocuments(c, cfg),
		col:   &collector{up: up, log: cfg.Log},
		fresh: freshness{finished: cfg.FinishedTTL, live: cfg.LiveInterval},
	}
	h.vm = viewMaker{az: az, docs: h.docs}
	h.fetchProjects = h.col.fetchAllProjects
	return h
}

// viewKey names one view of a document (document.view). kind tells the
// views apart; the results kind leaves the policy and principal fields
// empty (a result page is the same for everyone allowed to see it).
type viewKey struct {
	kind       byte
	policy     uint64 // authz Version
	principal  facade.PrincipalKey
	base       string
	expand     expandSet
	start, max int
}

const (
	kindProjects byte = iota + 1
	kindResults       // a document with links rewritten, the same for everyone allowed
	kindPruned        // a document with hidden items removed, per principal
	kindList          // a page of a collected list, per principal
)

func asFacadeError(err error) error {
	var fe *facade.Error
	if errors.As(err, &fe) {
		return fe
	}
	return facade.Wrap(facade.ErrInternal, err)
}

// upstreamBad is the error for a document that came back but is not what
// Bamboo sends; nothing of it reaches the client.
func upstreamBad(cause error) error {
	return facade.Wrap(facade.ErrUpstreamBad, cause)
}

// publicBase is the URL prefix rewritten links start with.
func (h *Handler) publicBase(r *Request) string {
	if h.cfg.PublicURL != "" {
		return h.cfg.PublicURL
	}
	if !validHost(r.Host) {
		// net/http already refuses most bad Host headers; whatever is left
		// gets host-relative links rather than reflected text.
		return ""
	}
	tls := r.TLS
	if last := h.lastBase.Load(); last != nil && last.host == r.Host && last.tls == tls {
		return last.base
	}
	scheme := "http://"
	if tls {
		scheme = "https://"
	}
	d := &derivedBase{host: r.Host, tls: tls, base: scheme + r.Host}
	h.lastBase.Store(d)
	return d.base
}

// validHost accepts a host name, IPv4 or bracketed IPv6 address, with an
// optional port.
func validHost(h string) bool {
	if len(h) == 0 || len(h) > 255 {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte(".-:[]", c) >= 0) {
			return false
		}
	}
	return true
}

// authorizePlan decides view on a plan before anything is read, and
// audits a refusal. The refusal is the same error whatever the plan.
func (h *Handler) authorizePlan(ctx context.Context, op string, p facade.Principal, plan facade.PlanKey) error {
	span := tracing.Authorize(ctx, op)
	allowed := h.az.CanViewPlan(p, plan)
	tracing.Allowed(span, allowed)
	if allowed {
		return nil
	}
	return h.az.Refuse(ctx, p, op, "plan:"+plan.String())
}

// view is an encoded answer, finished for its base, with its strong ETag
// (package internal/etag: the tag the server's conditional reads would
// compute from the same bytes): the one hash of a view, computed when it
// is built, so a view served again is not hashed again.
type view struct {
	body []byte
	tag  string
	// fields are the ETag and Content-Length header values, made once
	// with the view (Answer).
	fields *[2]string
	// marks are where the view holds a plan's isFavourite (finish).
	marks []favouriteMark
}

// viewIndexFactor: how many views (a caller and a query each) may be held
// per distinct view body. Principals of one team share one body; a team
// larger than the views held, asking in turn, would rebuild every view
// (docs/performance.md, "The build path").
const viewIndexFactor = 16

func newView(body []byte) view {
	tag := etag.Strong(body)
	return view{body: body, tag: tag, fields: &[2]string{tag, strconv.Itoa(len(body))}}
}

// Answer is a JSON build route's answer: 200 with Body, tagged and sized,
// so that the server's conditional reads can decide on If-None-Match from
// the headers and pass the body through (server/conditional.go).
type Answer struct {
	Body []byte
	// ETag and Length are the ETag and Content-Length header values,
	// shared and read-only (each of capacity one, so an append copies):
	// the server puts them in its header map as they are, without the
	// allocation a Set per header costs on every request.
	ETag, Length []string
	// Cache is where the document came from (the X-Cache header).
	Cache cache.Status
}

func (v view) answer(status cache.Status) Answer {
	return Answer{Body: v.body, ETag: v.fields[0:1:1], Length: v.fields[1:2:2], Cache: status}
}
