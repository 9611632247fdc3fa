package auth

import (
	"strconv"
	"testing"
)

// TestGroupsAreBoundedOnlyAgainstAHostileToken: an ID token may list any
// number of groups a real person has (ten times Entra's 200 and more);
// only past maxGroups (2048) are the rest left out, so a hostile token
// cannot make every request cost thousands of policy look-ups.
func TestGroupsAreBoundedOnlyAgainstAHostileToken(t *testing.T) {
	sent := make([]any, 0, 2100)
	for i := range 2100 {
		sent = append(sent, "g"+strconv.Itoa(i))
	}
	got := groups(sent)
	if len(got) != 2048 || got[0] != "g0" || got[2047] != "g2047" {
		t.Errorf("groups kept: %d, first %q, last %q; want g0 to g2047", len(got), got[0], got[len(got)-1])
	}
}
