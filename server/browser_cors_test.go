package server_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/facade-dev/facade/internal/testkit/testbrowser"
)

// otherSite serves a plain page on its own origin (another port of
// 127.0.0.1 is another origin), from which the test calls the API.
func otherSite(t *testing.T) string {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><title>another site</title><p>another site</p>`)
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

// crossOriginCalls runs, in the page at origin, a GET of alice's grade and
// a PUT setting it to grade, as a script on that site would (bearer token,
// anti-forgery header). It returns the GET status and the PUT's status, or
// "blocked" when the browser refused to send it.
func crossOriginCalls(b *testbrowser.Tab, origin, api, tok, grade string) (get string, put string) {
	b.T.Helper()
	b.Do(chromedp.Navigate(origin + "/"))
	js := fmt.Sprintf(`(async () => {
		const url = %q + '/student/alice/english/grade';
		const auth = {Authorization: 'Bearer ' + %q};
		const out = {};
		try { out.get = String((await fetch(url, {headers: auth})).status); } catch (e) { out.get = 'blocked'; }
		try {
			const r = await fetch(url, {method: 'PUT', body: JSON.stringify({grade: %q}),
				headers: Object.assign({'Content-Type': 'application/json', 'X-XSRF-TOKEN': 'x'}, auth)});
			out.put = String(r.status);
		} catch (e) { out.put = 'blocked'; }
		return out;
	})()`, api, tok, grade)
	out := testbrowser.Eval[map[string]string](b, js)
	return out["get"], out["put"]
}

// TestBrowserCrossOriginWrites: from the trusted write origin a GET and a
// PUT succeed; from another origin the GET succeeds, the browser refuses
// to send the PUT (the pre-flight is refused) and the grade stays.
func TestBrowserCrossOriginWrites(t *testing.T) {
	trusted, untrusted := otherSite(t), otherSite(t)
	e := newEnv(t, withPageOrigin(trusted))
	seedGrades(t, e)
	bob := token(t, "bob", "professor")
	b := testbrowser.New(t)

	get, put := crossOriginCalls(b, trusted, e.url, bob, "A-")
	if get != "200" || put != "200" {
		t.Fatalf("from the trusted origin: GET %s, PUT %s; want 200 and 200", get, put)
	}
	if r := e.do(req{method: "GET", path: "/student/alice/english/grade", token: bob}); !strings.Contains(r.body, `"grade":"A-"`) {
		t.Fatalf("the trusted PUT did not land: %s", r.body)
	}

	putsBefore := strings.Count(e.logs.String(), `"method":"PUT"`)
	if putsBefore == 0 {
		t.Fatal("the trusted PUT is not in the access log; the count below would prove nothing")
	}
	get, put = crossOriginCalls(b, untrusted, e.url, bob, "F")
	if get != "200" || put != "blocked" {
		t.Fatalf("from an untrusted origin: GET %s, PUT %s; want 200 and blocked by the browser", get, put)
	}
	if r := e.do(req{method: "GET", path: "/student/alice/english/grade", token: bob}); !strings.Contains(r.body, `"grade":"A-"`) {
		t.Fatalf("the untrusted PUT changed the grade: %s", r.body)
	}
	// The browser stopped at the refused pre-flight: the PUT never arrived.
	if after := strings.Count(e.logs.String(), `"method":"PUT"`); after != putsBefore {
		t.Errorf("%d PUT requests reached the server from the untrusted origin", after-putsBefore)
	}
	if !strings.Contains(e.logs.String(), `"method":"OPTIONS"`) {
		t.Error("no pre-flight reached the server")
	}
}
