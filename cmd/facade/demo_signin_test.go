//go:build demo

package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/facade-dev/facade/internal/testkit/testsignin"
)

// TestDemoSignsInAtItsOwnProvider: `facade demo` prints how to sign in and
// runs a real provider with its people; each signs in with one click and
// the session says who they are, while the printed tokens keep working.
func TestDemoSignsInAtItsOwnProvider(t *testing.T) {
	d := startDemo(t)
	if !strings.Contains(d.banner, "Sign in on the page: open "+d.base+"/ui/") || !strings.Contains(d.banner, "Erin, teaching assistant (view only)") {
		t.Fatalf("the banner does not say how to sign in:\n%s", d.banner)
	}
	for subject, want := range map[string]string{
		"student-alice": `"sub":"alice","role":"student"`, "professor-bob": `"sub":"bob","role":"professor"`,
		"staff-erin": `"sub":"erin","role":"professor"`, "holder-alice": `"sub":"alice","role":"customer"`,
		"developer-carol": `"sub":"carol","role":"developer"`,
	} {
		b := testsignin.NewBrowser(t)
		if resp := b.SignIn(d.base, subject, "/ui/"); resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("%s: sign-in answered %d", subject, resp.StatusCode)
		}
		resp := b.Do(http.MethodGet, d.base+"/auth/me", http.Header{"Sec-Fetch-Site": {"same-origin"}}, nil)
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 || !strings.Contains(string(body), want) || !strings.Contains(string(body), `"via":"session"`) {
			t.Errorf("%s: /auth/me %d %s", subject, resp.StatusCode, body)
		}
	}
	// erin, view only: she sees alice's grade and may not change it.
	b := testsignin.NewBrowser(t)
	b.SignIn(d.base, "staff-erin", "/ui/")
	xsrf := b.Cookie(d.base, "XSRF-TOKEN").Value
	if resp := b.Do(http.MethodGet, d.base+"/student/alice/english/grade", nil, nil); resp.StatusCode != 200 {
		t.Fatalf("erin reads alice's grade: %d", resp.StatusCode)
	}
	req, _ := http.NewRequest(http.MethodPut, d.base+"/student/alice/english/grade", strings.NewReader(`{"grade":"A"}`))
	req.Header = http.Header{"X-Xsrf-Token": {xsrf}, "Content-Type": {"application/json"}, "Sec-Fetch-Site": {"same-origin"}}
	put, err := b.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	put.Body.Close()
	if put.StatusCode != http.StatusForbidden {
		t.Fatalf("erin changes a grade: %d", put.StatusCode)
	}
	var me map[string]any
	resp := b.Do(http.MethodGet, d.base+"/auth/me", nil, nil)
	_ = json.NewDecoder(resp.Body).Decode(&me)
	if me["sub"] != "erin" {
		t.Fatalf("erin: %v", me)
	}
}
