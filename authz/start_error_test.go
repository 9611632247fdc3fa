package authz

import (
	"strings"
	"testing"

	"github.com/facade-dev/facade/authz/internal/policytest"
)

// TestStartErrorNamesTheFirstProblemAndCountsTheRest: a policy that cannot
// load stops the start with the first problem as file:line, and says how
// many more there are (so ops run `facade policy check` for all of them)
// only when there are more.
func TestStartErrorNamesTheFirstProblemAndCountsTheRest(t *testing.T) {
	modelPath, policyPath := policytest.Files(t, "p, alice, account:1001, view_acount")
	_, err := New(modelPath, policyPath, Config{})
	if err == nil || !strings.HasPrefix(err.Error(), "authz: "+policyPath+":1: ") || strings.Contains(err.Error(), "more problem") {
		t.Fatalf("one broken line: %v; want it named at %s:1 and nothing more", err, policyPath)
	}
	modelPath, policyPath = policytest.Files(t, "p, alice, account:1001, view_acount", "p, bob, account:2002, view_acount", "p, carol, account:3003, transfr")
	_, err = New(modelPath, policyPath, Config{})
	if err == nil || !strings.HasPrefix(err.Error(), "authz: "+policyPath+":1: ") || !strings.HasSuffix(err.Error(), " (and 2 more problems; run `facade policy check`)") {
		t.Fatalf("three broken lines: %v; want the first at %s:1 and 2 more", err, policyPath)
	}
}
