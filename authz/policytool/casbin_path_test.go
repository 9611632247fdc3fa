package policytool

import (
	"strings"
	"testing"

	facade "github.com/facade-dev/facade"
	"github.com/facade-dev/facade/authz/compiled"
	"github.com/facade-dev/facade/authz/internal/policytest"
)

// TestTheToolsSayCasbinDecidesAnUnrecognizedModel: on a model the index
// does not decide (policytest.AbacModel), `policy check` names casbin and
// why, and `policy explain` cites the line casbin's EnforceEx names.
func TestTheToolsSayCasbinDecidesAnUnrecognizedModel(t *testing.T) {
	modelPath, policyPath := policytest.ModelFiles(t, policytest.AbacModel, policytest.AbacLines...)
	p, err := Open(modelPath, policyPath)
	if err != nil || p.Decider() != compiled.DeciderCasbin || !strings.Contains(p.Family(), "not one the index decides (it uses modifier +)") {
		t.Fatalf("Open: %v, decider %q, family %q", err, p.Decider(), p.Family())
	}
	x, err := p.Explain(facade.Principal{ID: "alice"}, "account:1001", "view_account")
	if err != nil || !x.Allow || !strings.Contains(x.Rule, "p, team:x, account:1001, view_account") {
		t.Fatalf("explain through casbin's EnforceEx: %+v %v", x, err)
	}
}
