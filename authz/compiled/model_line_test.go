package compiled

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestModelRefusalNamesItsLine: a model the service cannot ask its
// questions of is refused at the line that makes it so, counted from 1 as
// an editor counts (the other refusal tests compute the line with the
// code under test; this one states it).
func TestModelRefusalNamesItsLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "model.conf")
	_, problems := CheckModel(path, `# line 1: a comment
[request_definition]
r = sub, obj, act
[policy_definition]
p = sub, obj, act
[role_definition]
g = _, _, _
[policy_effect]
e = some(where (p.eft == allow))
[matchers]
m = g(r.sub, p.sub, "x") && r.obj == p.obj && r.act == p.act
`)
	if !HasErrors(problems) || !strings.HasPrefix(problems[0].String(), path+":7: ") {
		t.Fatalf("problems %v, want the first at %s:7 (g = _, _, _)", problems, path)
	}
}
