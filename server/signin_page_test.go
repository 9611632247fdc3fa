package server

import (
	"strings"
	"testing"
)

// TestSignInFailedPageEscapesWhatHappened: what a refused sign-in says is
// text on the page, never markup, whatever it holds.
func TestSignInFailedPageEscapesWhatHappened(t *testing.T) {
	page, err := signInFailedPage(`<script>alert("x")</script> & your organization's`)
	if err != nil {
		t.Fatal(err)
	}
	body := string(page)
	if strings.Contains(body, "<script>") ||
		!strings.Contains(body, `<p id="what">&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; your organization&#39;s</p>`) {
		t.Fatalf("the words are not escaped as text:\n%s", body)
	}
}
