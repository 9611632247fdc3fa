package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/facade-dev/facade/internal/testkit/testbrowser"
)

// TestPlantedXSRFCookieNeitherPassesNorBlocks: on a session the session's
// own token decides. A second XSRF-TOKEN cookie (a sibling subdomain's,
// sent first) beside the person's own token lets the write through; the
// planted value in the header is refused.
func TestPlantedXSRFCookieNeitherPassesNorBlocks(t *testing.T) {
	e := newEnv(t, withSignIn(&signInEnv{}), withPageOrigin())
	seedGrades(t, e)
	b := signedIn(t, e, "bob")
	own := b.Cookie(e.url, "XSRF-TOKEN").Value
	session := b.Cookie(e.url, "facade-session")
	put := func(header, cookies string) (int, string) {
		r := e.do(req{method: "PUT", path: "/student/alice/english/grade", body: `{"grade":"A"}`, header: map[string]string{
			"Sec-Fetch-Site": "same-origin", "X-XSRF-TOKEN": header,
			"Cookie": cookies + "; " + session.Name + "=" + session.Value,
		}})
		return r.status, r.body
	}
	if status, body := put(own, "XSRF-TOKEN=planted; XSRF-TOKEN="+own); status != 200 {
		t.Errorf("the session's own token with a planted cookie first: %d %s", status, body)
	}
	if status, body := put("planted", "XSRF-TOKEN=planted"); status != 403 || !strings.Contains(body, `"xsrf"`) {
		t.Errorf("the planted value in header and cookie: %d %s", status, body)
	}
}

// TestOversizeBearerTokenIsMalformed: a bearer token past 12 KiB (13 KB,
// inside the 16 KiB of headers) was sent, so it is token-malformed with
// RFC 6750's invalid_token, never token-missing.
func TestOversizeBearerTokenIsMalformed(t *testing.T) {
	e := newEnv(t)
	r := e.do(req{method: "GET", path: "/rs/account", token: strings.Repeat("a", 13*1024)})
	if r.status != 401 || r.problem(t)["code"] != "token-malformed" || !strings.Contains(r.header.Get("WWW-Authenticate"), `error="invalid_token"`) {
		t.Fatalf("a 13 KB bearer token: %d %q %s", r.status, r.header.Get("WWW-Authenticate"), r.body)
	}
}

// TestBrowserPageWritesDespiteAPlantedCookie: the page takes its
// anti-forgery token from /auth/me, not document.cookie, so an
// XSRF-TOKEN cookie a script or sibling planted does not block its
// writes.
func TestBrowserPageWritesDespiteAPlantedCookie(t *testing.T) {
	e := newEnv(t, withSignIn(&signInEnv{}), withPageOrigin())
	seedGrades(t, e)
	b := testbrowser.New(t)
	b.Do(
		chromedp.Navigate(e.url+"/ui/"),
		chromedp.WaitVisible(chromedp.CSS(`body[data-ready="true"] #signin-link`)),
		chromedp.Click(chromedp.ID("signin-link")),
		chromedp.WaitVisible(chromedp.ID("person-bob")),
		chromedp.Click(chromedp.ID("person-bob")),
		chromedp.WaitVisible(chromedp.CSS(`body[data-ready="true"] #signout`)),
	)
	testbrowser.Eval[bool](b, `document.cookie = 'XSRF-TOKEN=planted-by-a-sibling; path=/', true`)
	status := testbrowser.Eval[float64](b, `import('/ui/js/api.js').then(api => api.request('/student/alice/english/grade', {
		method: 'PUT', body: JSON.stringify({grade: 'A-'}), headers: {'Content-Type': 'application/json'}}))
		.then(r => r.status, err => err.status)`)
	if status != http.StatusOK {
		t.Fatalf("a change from the page with a planted XSRF-TOKEN cookie: %v", status)
	}
}
