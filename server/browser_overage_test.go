package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/facade-dev/facade/internal/testkit/testbrowser"
)

// TestBrowserGroupsOverageIsExplained: a person whose groups did not fit
// in the sign-in's token (Entra's overage) is told on the page why group
// access is missing and whom to ask; a person with their groups is not.
func TestBrowserGroupsOverageIsExplained(t *testing.T) {
	e := pageEnv(t)
	b := testbrowser.New(t)
	overage := sign(t, hs256, testSecret, "", claims("alice", time.Hour,
		"_claim_names", map[string]any{"groups": "src1"},
		"_claim_sources", map[string]any{"src1": map[string]any{"endpoint": "https://graph.microsoft.com/v1.0/users/alice/getMemberObjects"}}))
	b.OpenPage(e.url, overage)
	b.WaitText("#own-grade", "English: B")
	b.WaitText("#groups-note", "more groups for you than it could send here")
	if note := b.Texts("#groups-note")[0]; !strings.Contains(note, "Ask the people who run your organization") {
		t.Errorf("the note does not say whom to ask: %q", note)
	}
	b.CheckView("groups overage note")

	b2 := testbrowser.New(t)
	b2.OpenPage(e.url, token(t, "alice", "student"))
	b2.WaitText("#own-grade", "English: B")
	if testbrowser.Eval[bool](b2, `!document.getElementById('groups-note').hidden`) {
		t.Error("the overage note shows for a person with their groups")
	}
}
