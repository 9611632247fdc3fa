package demoidp

import (
	"net/http/httptest"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/zitadel/oidc/v3/pkg/oidc"

	"github.com/facade-dev/facade/internal/testkit/testbrowser"
)

// TestPagesHaveAFavicon: every page of the provider names an icon a
// browser can load under the page's Content-Security-Policy. A headed
// browser asks each page for its icon (/favicon.ico when the page names
// none) and logs a missing one in the console; headless Chromium asks for
// none, so the test loads the icon as the browser would, in the page.
func TestPagesHaveAFavicon(t *testing.T) {
	ts := httptest.NewServer(nil)
	t.Cleanup(ts.Close)
	p, err := New(Config{Issuer: ts.URL, People: []Person{{Subject: "alice", Name: "Alice"}},
		Clients: []Client{{ID: "facade", RedirectURIs: []string{"http://127.0.0.1:8080/auth/callback"}}}})
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = p
	req, err := p.store.CreateAuthRequest(t.Context(), &oidc.AuthRequest{ClientID: "facade"}, "")
	if err != nil {
		t.Fatal(err)
	}
	id := req.GetID()
	b := testbrowser.New(t)
	for _, page := range []struct{ path, ready string }{
		{"/signed-out", "#back"},
		{"/login?authRequestID=" + id, "#person-alice"},
	} {
		b.Do(chromedp.Navigate(ts.URL+page.path), chromedp.WaitVisible(chromedp.CSS(page.ready)))
		got := testbrowser.Eval[string](b, `new Promise(done => {
			const link = document.querySelector('link[rel~="icon"]');
			const img = new Image();
			img.onload = () => done('loaded ' + img.src);
			img.onerror = () => done('failed ' + img.src);
			img.src = link ? link.href : '/favicon.ico';
		})`)
		if got != "loaded "+ts.URL+"/favicon.svg" {
			t.Errorf("%s: its icon %s", page.path, got)
		}
		if errs := b.ConsoleErrors(); len(errs) != 0 {
			t.Errorf("%s: the console says %q", page.path, errs)
		}
	}
}
