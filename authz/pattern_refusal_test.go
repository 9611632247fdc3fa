package authz

import (
	"strings"
	"testing"

	"github.com/facade-dev/facade/authz/internal/policytest"
)

// TestAWildcardCasbinFailsOnIsRefusedAtItsLine: with a wildcard matcher,
// a policy object casbin cannot compile (casbin would fail every question
// reaching it) stops the load, named at its line and saying why, so ops
// fix the line instead of hunting for it.
func TestAWildcardCasbinFailsOnIsRefusedAtItsLine(t *testing.T) {
	for fn, bad := range map[string]string{"regexMatch": "project:(WEB", "globMatch": "project:[WEB"} {
		t.Run(fn, func(t *testing.T) {
			modelPath, policyPath := policytest.Files(t, "p, carol, project:WEB, view", "p, dave, "+bad+", view")
			policytest.WriteFile(t, modelPath, `[request_definition]
r = sub, obj, act
[policy_definition]
p = sub, obj, act
[role_definition]
g = _, _
[policy_effect]
e = some(where (p.eft == allow))
[matchers]
m = g(r.sub, p.sub) && `+fn+`(r.obj, p.obj) && r.act == p.act
`)
			_, err := New(modelPath, policyPath, Config{})
			want := policyPath + ":2: object \"" + bad + "\" is not a valid " + fn + " pattern"
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("New: %v; want %q", err, want)
			}
		})
	}
}
