// Package testoidc starts a real OpenID provider, independent of Facade's
// embedded one, for tests: npm's oidc-provider 9.13.3 (OpenID Certified),
// run by Node from provider.mjs with one confidential client and the
// accounts a test names (any groups and role). The package is installed
// with npm into this folder's node_modules by .ci/run, or by Start when
// it is missing; nothing of it is committed. A test that cannot start it
// fails, it never skips.
//
// SignIn drives the provider's own login and consent pages as a person's
// browser would (internal/testkit/testsignin's scripted browser).
package testoidc

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/facade-dev/facade/internal/testkit/testsignin"
)

// Version is the oidc-provider release the tests run (package.json).
const Version = "9.13.3"

// Account is one person at the provider: the claims its ID tokens carry
// (for the scopes profile, groups and role).
type Account struct {
	PreferredUsername string   `json:"preferred_username,omitempty"`
	Name              string   `json:"name,omitempty"`
	Role              string   `json:"role,omitempty"`
	Groups            []string `json:"groups,omitempty"`
}

// Config is the provider's one client and its accounts, by login (the sub).
type Config struct {
	ClientID      string             `json:"client_id"`
	ClientSecret  string             `json:"client_secret"`
	RedirectURI   string             `json:"redirect_uri"`
	PostLogoutURI string             `json:"post_logout_redirect_uri"`
	Accounts      map[string]Account `json:"accounts"`
	// BackchannelLogoutURI, when set, is the client's
	// backchannel_logout_uri: ending a person's session at the provider
	// (EndSession) POSTs a logout token there (Back-Channel Logout 1.0).
	BackchannelLogoutURI string `json:"backchannel_logout_uri,omitempty"`
	// JWKS, when set, is the provider's signing key set (private JWKs):
	// a test that holds the key can sign tokens as the provider would.
	JWKS json.RawMessage `json:"jwks,omitempty"`
}

// Provider is a running oidc-provider.
type Provider struct {
	URL  string // the issuer
	cfg  Config
	log  *lines
	conf string // the config file the provider reads accounts from
	cmd  *exec.Cmd
}

// Stop ends the provider before the test does: it then answers nothing,
// as a provider that is down.
func (p *Provider) Stop() { _ = p.cmd.Process.Kill() }

// SetAccount changes (or, with nil, removes) a person at the running
// provider: their next token, refreshed or new, says so; removed, the
// provider refuses to refresh their tokens (invalid_grant), as when an
// administrator disables someone.
func (p *Provider) SetAccount(t testing.TB, login string, a *Account) {
	t.Helper()
	accounts := map[string]Account{}
	for k, v := range p.cfg.Accounts {
		accounts[k] = v
	}
	if a == nil {
		delete(accounts, login)
	} else {
		accounts[login] = *a
	}
	p.cfg.Accounts = accounts
	b, _ := json.Marshal(p.cfg)
	if err := os.WriteFile(p.conf+".new", b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(p.conf+".new", p.conf); err != nil { // never half a file
		t.Fatal(err)
	}
}

// lines is the provider's output so far, safe to read while it runs.
type lines struct {
	mu  sync.Mutex
	all []string
}

func (l *lines) add(s string) {
	l.mu.Lock()
	l.all = append(l.all, s)
	l.mu.Unlock()
}

func (l *lines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.all, "\n")
}

// Output is what the provider printed so far (back-channel deliveries
// included: "backchannel sent: <account> <sid>" or "backchannel error: ...").
func (p *Provider) Output() string { return p.log.String() }

// dir is this package's folder, where provider.mjs and node_modules are.
func dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// Install puts oidc-provider into node_modules with npm when it is not
// there yet (one installer at a time: a lock file beside it).
func Install() error {
	d := dir()
	if _, err := os.Stat(filepath.Join(d, "node_modules", "oidc-provider", "package.json")); err == nil {
		return nil
	}
	lock, err := os.OpenFile(filepath.Join(d, ".install.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(d, "node_modules", "oidc-provider", "package.json")); err == nil {
		return nil
	}
	cmd := exec.Command("npm", "install", "--no-audit", "--no-fund", "--silent", "--no-package-lock")
	cmd.Dir = d
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("npm install oidc-provider@%s: %v\n%s", Version, err, out)
	}
	return nil
}

// Start runs the provider on a free loopback port until the test ends.
func Start(t testing.TB, cfg Config) *Provider {
	t.Helper()
	if err := Install(); err != nil {
		t.Fatalf("testoidc: %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	conf := filepath.Join(t.TempDir(), "provider.json")
	b, _ := json.Marshal(cfg)
	if err := os.WriteFile(conf, b, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", filepath.Join(dir(), "provider.mjs"), strconv.Itoa(port), conf)
	cmd.Dir = dir()
	cmd.Env = append(os.Environ(), "NODE_ENV=test")
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatalf("testoidc: node: %v", err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	ready := make(chan string, 1)
	out := &lines{}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "listening ") {
				ready <- strings.TrimPrefix(sc.Text(), "listening ")
			}
			out.add(sc.Text())
		}
	}()
	select {
	case issuer := <-ready:
		return &Provider{URL: issuer, cfg: cfg, log: out, conf: conf, cmd: cmd}
	case <-time.After(60 * time.Second):
		t.Fatalf("testoidc: oidc-provider did not start: %s", out)
	}
	return nil
}

var formAction = regexp.MustCompile(`<form[^>]*action="([^"]+)"`)

// SignIn follows b from the provider's authorize URL through its login
// page (as login) and consent page, and returns the callback URL the
// provider sends the browser back to (code and state).
func (p *Provider) SignIn(b *testsignin.Browser, authorize *url.URL, login string) *url.URL {
	b.T.Helper()
	next := authorize
	for hop := 0; hop < 20; hop++ {
		if strings.HasPrefix(next.String(), p.cfg.RedirectURI) {
			return next
		}
		resp := b.Get(next.String())
		if loc := resp.Header.Get("Location"); loc != "" {
			next, _ = next.Parse(loc)
			continue
		}
		page := readAll(resp)
		m := formAction.FindStringSubmatch(page)
		if resp.StatusCode != http.StatusOK || m == nil {
			b.T.Fatalf("testoidc: %s answered %d: %.500s", next, resp.StatusCode, page)
		}
		action, _ := next.Parse(m[1])
		form := url.Values{"prompt": {"consent"}}
		if strings.Contains(page, `name="login"`) {
			form = url.Values{"prompt": {"login"}, "login": {login}, "password": {"any"}}
		}
		post := b.Do(http.MethodPost, action.String(), nil, form)
		loc := post.Header.Get("Location")
		if loc == "" {
			b.T.Fatalf("testoidc: %s answered %d: %.500s", action, post.StatusCode, readAll(post))
		}
		next, _ = action.Parse(loc)
	}
	b.T.Fatalf("testoidc: no callback after 20 hops (last %s)", next)
	return nil
}

var xsrfInput = regexp.MustCompile(`name="xsrf" value="([^"]+)"`)

// EndSession ends b's session at the provider as the person would on its
// own sign-out page (GET /session/end, then "Yes, sign me out"): the
// provider then sends its back-channel logout to the client, and answers
// once the client has answered it.
func (p *Provider) EndSession(b *testsignin.Browser) {
	b.T.Helper()
	resp := b.Get(p.URL + "/session/end")
	page := readAll(resp)
	m := xsrfInput.FindStringSubmatch(page)
	if resp.StatusCode != http.StatusOK || m == nil {
		b.T.Fatalf("testoidc: /session/end answered %d: %.500s", resp.StatusCode, page)
	}
	post := b.Do(http.MethodPost, p.URL+"/session/end/confirm", nil, url.Values{"xsrf": {m[1]}, "logout": {"yes"}})
	if post.StatusCode != http.StatusSeeOther && post.StatusCode != http.StatusFound && post.StatusCode != http.StatusOK {
		b.T.Fatalf("testoidc: sign-out confirm answered %d: %.500s", post.StatusCode, readAll(post))
	}
}

func readAll(resp *http.Response) string {
	var sb strings.Builder
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		sb.Write(buf[:n])
		if err != nil {
			return sb.String()
		}
	}
}
