package demoidp

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// TestDeadEndsLinkBackToTheApplication: a sign-in that expired (a page
// left open, a form sent twice) and the signed-out page are pages that
// say what happened and link back to the application, not bare text.
func TestDeadEndsLinkBackToTheApplication(t *testing.T) {
	p, err := New(Config{Issuer: "http://127.0.0.1:9000", People: []Person{{Subject: "alice", Name: "Alice"}},
		Clients: []Client{{ID: "facade", RedirectURIs: []string{"http://127.0.0.1:8080/auth/callback"}}}})
	if err != nil {
		t.Fatal(err)
	}
	for name, r := range map[string]*http.Request{
		"expired sign-in page": httptest.NewRequest("GET", "/login?authRequestID=gone", nil),
		"expired choice": func() *http.Request {
			r := httptest.NewRequest("POST", "/login", strings.NewReader(url.Values{"id": {"gone"}, "person": {"alice"}}.Encode()))
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			return r
		}(),
		"signed out": httptest.NewRequest("GET", "/signed-out", nil),
	} {
		w := httptest.NewRecorder()
		p.ServeHTTP(w, r)
		body, _ := io.ReadAll(w.Result().Body)
		if !strings.HasPrefix(w.Header().Get("Content-Type"), "text/html") ||
			!strings.Contains(string(body), `<a id="back" href="http://127.0.0.1:8080/ui/">`) || !strings.Contains(string(body), "<h1>") {
			t.Errorf("%s: %d %s %s", name, w.Code, w.Header().Get("Content-Type"), body)
		}
	}
}
