package authz

import (
	"path/filepath"
	"strings"
	"testing"
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
		{terms, deciderIndex, "role hierarchy (g)"},
		{`(g(r.sub, p.sub) && (r.obj == p.obj)) && (r.act == p.act)`, deciderIndex, "role hierarchy (g)"},
		{`g((r.sub), p.sub) && keyMatch(r.obj, (p.obj)) && r.act == p.act`, deciderIndex, "role hierarchy (g), wildcard objects (keyMatch)"},

		// Where the parser stopped, by the token casbin's lexer made.
		{`g(r.sub, p.sub) && r.obj == p.obj && r.act >= p.act`, deciderCasbin,
			"the matcher is not one the index decides (it uses comparator >=)"},
		{`g(r.sub, p.sub) && r.obj == p.obj && r.act == p.act == true`, deciderCasbin,
			"the matcher is not one the index decides (it uses comparator ==)"},
		{terms + ` && 1`, deciderCasbin, "the matcher is not one the index decides (it uses numeric 1)"},
		{terms + `, r.sub`, deciderCasbin, "the matcher is not one the index decides (it uses separator ,)"},
		{terms + ` && g(r.sub, p.sub) r.sub`, deciderCasbin, "the matcher is not one the index decides (it uses variable r_sub)"},
		{terms + ` && (r.sub, r.obj)`, deciderCasbin, "the matcher is not one the index decides (it uses separator ,)"},

		// The term the index cannot decide, as casbin reads it.
		{terms + ` && keyMatch(r.obj, p.obj, "x")`, deciderCasbin,
			`matcher term keyMatch(r_obj, p_obj, "x") is not one the index decides`},
		{`g(r.sub, p.sub) && r.obj == p.obj && (r.act == p.act || r.act == "x" && r.sub == "y")`, deciderCasbin,
			`matcher term r_act == p_act || r_act == "x" && r_sub == "y" is not one the index decides`},
		{`g(r.sub, p.sub) && r.obj == p.obj && (r.act == p.act || (r.act == "x" || r.sub == "y"))`, deciderCasbin,
			`matcher term r_act == p_act || (r_act == "x" || r_sub == "y") is not one the index decides`},
		{terms + ` && (r.sub == "x" && r.obj == "y") == r.act`, deciderCasbin,
			`matcher term (r_sub == "x" && r_obj == "y") == r_act is not one the index decides`},
		{terms + ` && (r.sub == "x" || r.obj == "y") != r.act`, deciderCasbin,
			`matcher term (r_sub == "x" || r_obj == "y") != r_act is not one the index decides`},
		{terms + ` && !(r.sub == "x")`, deciderCasbin, `matcher term !(r_sub == "x") is not one the index decides`},
		{terms + ` && !(r.sub == "x" || r.act == "y")`, deciderCasbin,
			`matcher term !(r_sub == "x" || r_act == "y") is not one the index decides`},
		{terms + ` && !keyMatch(r.obj, p.obj)`, deciderCasbin, `matcher term !keyMatch(r_obj, p_obj) is not one the index decides`},
		{terms + ` && r.act == p.act`, deciderCasbin, `matcher term r_act == p_act repeats a condition on act`},
	} {
		dir := t.TempDir()
		modelPath, policyPath := filepath.Join(dir, "model.conf"), filepath.Join(dir, "policy.csv")
		model := strings.Replace(shippedModel(t), "\nm = ", "\nm = "+c.matcher+"\n# was: ", 1)
		writeFile(t, modelPath, model)
		writeFile(t, policyPath, "p, alice, account:1001, view_account\n")
		p, err := Open(modelPath, policyPath)
		if err != nil {
			t.Errorf("m = %s: %v", c.matcher, err)
			continue
		}
		if p.Decider() != c.decider || p.Family() != c.family {
			t.Errorf("m = %s\n decider %s (%s)\n want    %s (%s)", c.matcher, p.Decider(), p.Family(), c.decider, c.family)
		}
	}
}
