package compiled

import (
	"strings"
	"testing"

	"github.com/facade-dev/facade/authz/internal/policytest"
)

// What `facade policy check` prints (docs/policy.md, "Which models the service
// decides itself"): a matcher the index takes is named by its family, and
// one it leaves to casbin's slower Enforce is named with the reason, the
// token where parsing stopped or the term it cannot decide written back in
// casbin's syntax. An operator reads that line to find what to change in
// model.conf, so the term must read as it means.
func TestPolicyCheckSaysWhyAMatcherIsLeftToCasbin(t *testing.T) {
	const terms = `g(r.sub, p.sub) && r.obj == p.obj && r.act == p.act`
	for _, c := range []struct{ matcher, decider, family string }{
		{terms, DeciderIndex, "role hierarchy (g)"},
		{`(g(r.sub, p.sub) && (r.obj == p.obj)) && (r.act == p.act)`, DeciderIndex, "role hierarchy (g)"},
		{`g((r.sub), p.sub) && keyMatch(r.obj, (p.obj)) && r.act == p.act`, DeciderIndex, "role hierarchy (g), wildcard objects (keyMatch)"},

		// Where the parser stopped, by the token casbin's lexer made.
		{`g(r.sub, p.sub) && r.obj == p.obj && r.act >= p.act`, DeciderCasbin,
			"the matcher is not one the index decides (it uses comparator >=)"},
		{`g(r.sub, p.sub) && r.obj == p.obj && r.act == p.act == true`, DeciderCasbin,
			"the matcher is not one the index decides (it uses comparator ==)"},
		{terms + ` && 1`, DeciderCasbin, "the matcher is not one the index decides (it uses numeric 1)"},
		{terms + ` && g(r.sub, p.sub) r.sub`, DeciderCasbin, "the matcher is not one the index decides (it uses variable r_sub)"},
		{terms + ` && (r.sub, r.obj)`, DeciderCasbin, "the matcher is not one the index decides (it uses separator ,)"},

		// The term the index cannot decide, as casbin reads it.
		{terms + ` && keyMatch(r.obj, p.obj, "x")`, DeciderCasbin,
			`matcher term keyMatch(r_obj, p_obj, "x") is not one the index decides`},
		{`g(r.sub, p.sub) && r.obj == p.obj && (r.act == p.act || r.act == "x" && r.sub == "y")`, DeciderCasbin,
			`matcher term r_act == p_act || r_act == "x" && r_sub == "y" is not one the index decides`},
		{`g(r.sub, p.sub) && r.obj == p.obj && (r.act == p.act || (r.act == "x" || r.sub == "y"))`, DeciderCasbin,
			`matcher term r_act == p_act || (r_act == "x" || r_sub == "y") is not one the index decides`},
		{terms + ` && (r.sub == "x" && r.obj == "y") == r.act`, DeciderCasbin,
			`matcher term (r_sub == "x" && r_obj == "y") == r_act is not one the index decides`},
		{terms + ` && (r.sub == "x" || r.obj == "y") != r.act`, DeciderCasbin,
			`matcher term (r_sub == "x" || r_obj == "y") != r_act is not one the index decides`},
		{terms + ` && !(r.sub == "x")`, DeciderCasbin, `matcher term !(r_sub == "x") is not one the index decides`},
		{terms + ` && !(r.sub == "x" || r.act == "y")`, DeciderCasbin,
			`matcher term !(r_sub == "x" || r_act == "y") is not one the index decides`},
		{terms + ` && !keyMatch(r.obj, p.obj)`, DeciderCasbin, `matcher term !keyMatch(r_obj, p_obj) is not one the index decides`},
		{terms + ` && r.act == p.act`, DeciderCasbin, `matcher term r_act == p_act repeats a condition on act`},
	} {
		model := strings.Replace(policytest.ShippedModel(t), "\nm = ", "\nm = "+c.matcher+"\n# was: ", 1)
		p, problems := compileTexts(model, "p, alice, account:1001, view_account\n")
		if p == nil {
			t.Errorf("m = %s: %v", c.matcher, problems)
			continue
		}
		if p.Decider() != c.decider || p.Family != c.family {
			t.Errorf("m = %s\n decider %s (%s)\n want    %s (%s)", c.matcher, p.Decider(), p.Family, c.decider, c.family)
		}
	}
}
