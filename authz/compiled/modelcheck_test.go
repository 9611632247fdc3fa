package compiled

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/facade-dev/facade/authz/internal/policytest"
)

// TestRefusalsSayWhyAtTheLine: models the service cannot ask its questions
// of are refused at the model line that makes them so, saying why.
func TestRefusalsSayWhyAtTheLine(t *testing.T) {
	shipped := policytest.ShippedModel(t)
	for _, c := range []struct {
		name, from, to, want string
	}{
		{"time-bounded roles", "g = _, _\n", "g = _, _, (_, _)\n", "is time-bounded"},
		{"typed roles", "g = _, _\n", "g = _, _, _\n", "links roles within a domain or of a type"},
		{"a request with a domain", "r = sub, obj, act\n", "r = sub, dom, obj, act\n", "must say r = sub, obj, act"},
		{"a request named otherwise", "r = sub, obj, act\n", "r = user, resource, action\n", "must say r = sub, obj, act"},
	} {
		t.Run(c.name, func(t *testing.T) {
			text := strings.Replace(shipped, c.from, c.to, 1)
			if text == shipped {
				t.Fatal("the shipped model has no line to change")
			}
			path := filepath.Join(t.TempDir(), "model.conf")
			line := lineOfKey(text, strings.TrimSpace(strings.Split(c.to, "=")[0]))
			_, problems := CheckModel(path, text)
			if !HasErrors(problems) || !strings.HasPrefix(problems[0].String(), path+":"+strconv.Itoa(line)+": ") || !strings.Contains(problems[0].Msg, c.want) {
				t.Fatalf("problems %v, want %s:%d: ...%s", problems, path, line, c.want)
			}
		})
	}
}

// TestMatchersCasbinFailsOnAreRefused: a model that loads but on which
// casbin's Enforce fails (for every string request, or at the first
// question) is refused at the matcher's line: loaded, every decision
// would be a silent deny.
func TestMatchersCasbinFailsOnAreRefused(t *testing.T) {
	shipped := policytest.ShippedModel(t)
	policy, err := os.ReadFile(policytest.RepoFile(t, "policy.csv"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ from, to, want string }{
		{"&& r.act == p.act", "&& r.act == p.act && r.obj.Owner == r.sub", "reads r.obj.Owner, an attribute of a request value, but the service's requests are strings"},
		{"&& r.act == p.act", "&& r.act == p.act && isOwner(r.sub, r.obj)", "calls isOwner, which casbin does not define"},
		{"&& r.act == p.act", "&& r.act == p.act &&", "casbin cannot parse the matcher"},
		// Parsed, but casbin fails when it evaluates it (keyMatch2 takes two arguments).
		{"m = ", "m = keyMatch2(r.obj) || ", "casbin fails on the first question it is asked"},
		// A list, not a truth value (TestPolicyCheckSaysWhyAMatcherIsLeftToCasbin had it left to casbin).
		{"&& r.act == p.act", "&& r.act == p.act, r.sub", "casbin fails on the first question it is asked (matcher result should be bool"},
	} {
		text := strings.Replace(shipped, c.from, c.to, 1)
		p, problems := compileTexts(text, string(policy)) // the model as model.conf
		want := "model.conf:" + strconv.Itoa(lineOfKey(text, "m")) + ": "
		found := false
		for _, p := range problems {
			found = found || !p.Warning && strings.HasPrefix(p.String(), want) && strings.Contains(p.Msg, c.want)
		}
		if !found || p != nil {
			t.Errorf("%s: problems %v, want a refusal %s...%s", c.to, problems, want, c.want)
		}
	}
}
