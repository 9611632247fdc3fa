// Package demoidp is a real OpenID provider for `facade demo` and the
// tests, built on zitadel/oidc's op package (an OpenID Certified provider
// library): discovery, authorization code flow with PKCE, signed ID
// tokens, keys, userinfo, end session. Only the sign-in page and the
// in-memory storage are ours: a page that lists the demo people, each
// signed in with one click and no password. It is for trying Facade out
// and for testing its relying party against a provider that behaves like
// the organization's, never for production.
package demoidp

import (
	"crypto/rand"
	"crypto/rsa"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/zitadel/oidc/v3/pkg/op"
)

// Person is one demo person the sign-in page lists.
type Person struct {
	Subject  string   // the ID token's sub: unique at this provider
	Username string   // preferred_username
	Name     string   // name, shown on the page
	About    string   // one line on the page: what this person may do
	Role     string   // the "role" claim
	Groups   []string // the "groups" claim
}

// Client is one relying party registered at the provider. Without a
// Secret it is a public client: PKCE proves it.
type Client struct {
	ID, Secret      string
	RedirectURIs    []string
	PostLogoutURIs  []string
	IDTokenLifetime time.Duration // zero: one hour
}

// Config is the provider's issuer, people and clients.
type Config struct {
	Issuer  string // e.g. http://127.0.0.1:9000, where the handler is served
	People  []Person
	Clients []Client
	Log     *slog.Logger
	// Now is the clock sign-ins and access tokens are timed by; nil means
	// time.Now. (The ID token's iat and exp come from the OIDC library,
	// which reads time.Now.)
	Now func() time.Time
}

// Provider is the http.Handler serving the provider.
type Provider struct {
	http.Handler
	store *storage
}

// New builds the provider with a fresh signing key. It takes one Config
// and no required parts, the components' shape (README, after the Layout
// table).
func New(cfg Config) (*Provider, error) {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	st := &storage{
		people: map[string]Person{}, clients: map[string]*client{},
		requests: map[string]*authRequest{}, codes: map[string]string{}, tokens: map[string]*token{},
		keys: keys{key: signingKey{id: randomHex(8), key: key}}, now: cfg.Now,
	}
	for _, p := range cfg.People {
		st.people[p.Subject] = p
		st.order = append(st.order, p.Subject)
	}
	var formTargets []string
	for _, c := range cfg.Clients {
		st.clients[c.ID] = &client{c}
		for _, u := range c.RedirectURIs {
			if pu, err := url.Parse(u); err == nil {
				formTargets = append(formTargets, pu.Scheme+"://"+pu.Host)
			}
		}
	}
	var cryptoKey [32]byte
	_, _ = rand.Read(cryptoKey[:])
	provider, err := op.NewProvider(&op.Config{
		CryptoKey:                cryptoKey,
		DefaultLogoutRedirectURI: "/signed-out",
		CodeMethodS256:           true,
		AuthMethodPost:           true,
	}, st, op.StaticIssuer(cfg.Issuer), op.WithAllowInsecure(), op.WithLogger(cfg.Log))
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	apps := slices.Compact(slices.Sorted(slices.Values(formTargets)))
	pg := &loginPage{store: st, callback: op.AuthCallbackURL(provider), apps: apps,
		csp: "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; frame-ancestors 'none'; form-action 'self' " +
			strings.Join(apps, " ")}
	interceptor := op.NewIssuerInterceptor(provider.IssuerFromRequest)
	mux.HandleFunc("GET /login", pg.show)
	mux.HandleFunc("POST /login", interceptor.HandlerFunc(pg.choose))
	mux.HandleFunc("GET /login.css", pg.style)
	mux.HandleFunc("GET /favicon.svg", pg.icon)
	mux.HandleFunc("GET /favicon.ico", pg.icon) // asked for by browsers whatever a page names
	mux.HandleFunc("GET /signed-out", pg.signedOut)
	mux.Handle("/", provider)
	return &Provider{Handler: mux, store: st}, nil
}
