// Package upstream is the client of the Atlassian Bamboo REST API that the
// build-results endpoints proxy to (docs/contract.md §6).
//
// It builds every upstream URL itself from validated parts, authenticates
// with the service's own token (never the caller's), bounds each call with
// one deadline that covers its retries (resty's), and puts a circuit
// breaker in front of Bamboo so that a failing server is not hammered.
// Documents come back as their bytes (which the cache stores) and the one
// JSON object they decode to (generically, so every field Bamboo sends
// survives); artifacts come back as a stream.
//
// Every failure is a *facade.Error with a fixed detail sentence: nothing the
// upstream sent (body, headers, host) reaches a Detail, only Err, for logs.
package upstream

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/go-resty/resty/v2"

	facade "github.com/facade-dev/facade"
	"github.com/facade-dev/facade/metrics"
)

// Config configures a Client. Only BaseURL is required; every other field
// documents what its zero value means.
type Config struct {
	// BaseURL is Bamboo's base URL, context path included
	// (https://bamboo.example.com or http://host:8085/bamboo).
	BaseURL string
	// Token is the Bamboo personal access token sent as
	// "Authorization: Bearer". Empty: no Authorization header (anonymous).
	Token string
	// Timeout bounds a whole document call, retries included, and an
	// artifact call until its headers arrive; an artifact body may then
	// stream for as long as it keeps making progress within Timeout.
	// Zero or negative means the default, 10s.
	Timeout time.Duration
	// Retries is how many times a failed GET is tried again (network error,
	// 5xx, 429) while the deadline allows. 0 means the default, 2; negative
	// means none.
	Retries int
	// BreakerFailures is the number of consecutive failed calls that opens
	// the breaker. Zero means the default, 5.
	BreakerFailures uint32
	// BreakerOpenFor is how long the breaker stays open before one probe
	// call may go through. Zero or negative means the default, 30s.
	BreakerOpenFor time.Duration
	// HTTPClient, when set, supplies the transport (tests, custom TLS). The
	// client copies it and installs its own redirect policy on the copy.
	// Nil means a plain http.Client.
	HTTPClient *http.Client
	// Metrics counts calls and shows the breaker's state; nil means a
	// private set.
	Metrics *metrics.Metrics
	// Now is the clock the breaker's open period and the call latencies
	// run on; nil means time.Now. Deadlines and retry pauses are timers,
	// on the machine's clock.
	Now func() time.Time
	// Log receives failed calls, breaker changes and the plain-http
	// warning, tagged component=upstream; nil means slog.Default().
	Log *slog.Logger
}

// Defaults applied by New.
const (
	DefaultTimeout         = 10 * time.Second
	DefaultRetries         = 2
	DefaultBreakerFailures = 5
	DefaultBreakerOpenFor  = 30 * time.Second

	// maxDocumentBytes bounds a JSON document read into memory. A page of
	// 100 results with artifacts is well under 1 MiB.
	maxDocumentBytes = 32 << 20
	// maxRedirects bounds same-host redirects (http to https, context path).
	maxRedirects = 3
)

// Client calls one Bamboo server. It is safe for concurrent use.
type Client struct {
	base    string // BaseURL without a trailing slash
	baseURL *url.URL
	cfg     Config
	http    *resty.Client
	breaker *breaker
	log     *slog.Logger
	metrics *metrics.Metrics
}

// New checks cfg, applies defaults and returns a Client. It does not
// contact Bamboo.
func New(cfg Config) (*Client, error) {
	base, err := parseBaseURL(cfg.BaseURL)
	if err != nil {
		return nil, err
	}
	cfg = withDefaults(cfg)
	c := &Client{
		base:    strings.TrimSuffix(base.String(), "/"),
		baseURL: base,
		cfg:     cfg,
		log:     cfg.Log.With("component", "upstream"),
		metrics: metrics.Or(cfg.Metrics),
	}
	c.breaker = newBreaker(cfg.BreakerFailures, cfg.BreakerOpenFor, cfg.Now, c.log, c.metrics.BreakerState)
	c.http = c.newResty()
	// Loopback (a sidecar, the demo) is no wire anyone else can read.
	if base.Scheme == "http" && cfg.Token != "" && !isLoopback(base.Hostname()) {
		c.log.Warn("upstream token is sent over plain http", "base_url", c.base)
	}
	return c, nil
}

func parseBaseURL(raw string) (*url.URL, error) {
	if raw == "" {
		return nil, errors.New("upstream: BaseURL is required")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("upstream: BaseURL: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("upstream: BaseURL must be an http or https URL with a host")
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, errors.New("upstream: BaseURL must not carry credentials, a query or a fragment")
	}
	return u, nil
}

func withDefaults(cfg Config) Config {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	switch {
	case cfg.Retries == 0:
		cfg.Retries = DefaultRetries
	case cfg.Retries < 0:
		cfg.Retries = 0
	}
	if cfg.BreakerFailures == 0 {
		cfg.BreakerFailures = DefaultBreakerFailures
	}
	if cfg.BreakerOpenFor <= 0 {
		cfg.BreakerOpenFor = DefaultBreakerOpenFor
	}
	return cfg
}

// newResty builds the HTTP client: no cookie jar (the token authenticates
// every call), resty's retries within the call's time budget (call.go:
// which answers are retried, and when there is no time left for another
// try), the redirect policy below, and artifact bodies left unread so that
// they stream.
func (c *Client) newResty() *resty.Client {
	hc := &http.Client{}
	if c.cfg.HTTPClient != nil {
		copied := *c.cfg.HTTPClient
		hc = &copied
	}
	r := resty.NewWithClient(hc).
		SetLogger(restyLogger{c.log}).
		SetDisableWarn(true). // the plain-http token warning is logged once in New
		SetRetryCount(c.cfg.Retries).
		SetRetryWaitTime(retryWait).
		SetRetryMaxWaitTime(retryMaxWait).
		AddRetryCondition(retryable).
		SetRetryAfter(retryPause).
		AddRetryHook(discardRetried).
		SetRedirectPolicy(resty.RedirectPolicyFunc(c.checkRedirect)).
		SetHeader("User-Agent", "facade-upstream")
	if c.cfg.Token != "" {
		r.SetAuthToken(c.cfg.Token)
	}
	return r
}

// errRedirectElsewhere refuses a redirect off the configured Bamboo server:
// the token must not travel there, and its answer is not Bamboo's.
var errRedirectElsewhere = errors.New("upstream redirected to another host or too often")

// checkRedirect is asked before every hop, so a chain is re-checked at
// each step: the hop must stay on the configured server, and an artifact
// download may only move to another artifact path (see artifactHop).
func (c *Client) checkRedirect(req *http.Request, via []*http.Request) error {
	sameServer := req.URL.Host == c.baseURL.Host &&
		(req.URL.Scheme == c.baseURL.Scheme || req.URL.Scheme == "https")
	if !sameServer || len(via) > maxRedirects {
		return errRedirectElsewhere
	}
	if hop, ok := req.Context().Value(artifactHopKey{}).(artifactHop); ok && !c.artifactHopAllowed(req.URL, hop) {
		return errRedirectElsewhere
	}
	return nil
}

// Path names a document of Bamboo's REST API below /rest/api/latest: a
// resource ("plan", "result"), the build key it is about (zero for a
// list of everything: /result) and a part of what the key names
// ("branch", "label", "comment"). Resource and Part are words of the
// build routes' table; the key was parsed where the request named it.
type Path struct {
	Resource string
	Key      facade.BuildKey
	Part     string
}

// Document returns GET {base}/rest/api/latest/{resource}[/{key}][/{part}].json?{q},
// decoded (Document). Resource and Part must be 1-32 lowercase letters,
// else ErrBadIdentifier without any call; q is the query the caller
// built, never a client's text. op names the call in metrics and logs.
func (c *Client) Document(ctx context.Context, op string, at Path, q url.Values) (Document, error) {
	if !word(at.Resource) || at.Part != "" && !word(at.Part) {
		return Document{}, facade.ErrBadIdentifier
	}
	return c.document(ctx, op, c.base+"/rest/api/latest/"+at.String()+".json"+encodeQuery(q))
}

// String is the path as it follows /rest/api/latest/: resource[/key][/part].
func (at Path) String() string {
	s := at.Resource
	if !at.Key.IsZero() {
		s += "/" + at.Key.String()
	}
	if at.Part != "" {
		s += "/" + at.Part
	}
	return s
}

// encodeQuery is the query part of an upstream URL: "" or "?" and v.
func encodeQuery(v url.Values) string {
	if len(v) == 0 {
		return ""
	}
	return "?" + v.Encode()
}

// word: 1-32 lowercase letters, as Bamboo names its resources.
func word(s string) bool {
	return len(s) >= 1 && len(s) <= 32 && strings.Trim(s, "abcdefghijklmnopqrstuvwxyz") == ""
}

// Projects returns GET {base}/rest/api/latest/project.json, decoded.
func (c *Client) Projects(ctx context.Context, q ProjectQuery) (Document, error) {
	return c.document(ctx, opProjects, c.projectsURL(q))
}

// BreakerState returns the breaker's state (closed, half-open or open) and
// refreshes metrics.BreakerState, so /readyz and /metrics agree.
func (c *Client) BreakerState() BreakerState {
	return c.breaker.current()
}

// restyLogger sends resty's own messages to slog at debug level: the client
// logs every failed call itself, with the operation and outcome.
type restyLogger struct{ log *slog.Logger }

func (l restyLogger) Errorf(format string, v ...any) { l.log.Debug(fmt.Sprintf(format, v...)) }
func (l restyLogger) Warnf(format string, v ...any)  { l.log.Debug(fmt.Sprintf(format, v...)) }
func (l restyLogger) Debugf(format string, v ...any) { l.log.Debug(fmt.Sprintf(format, v...)) }

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
