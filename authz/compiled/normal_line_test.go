package compiled

import (
	"slices"
	"testing"

	"github.com/casbin/casbin/v2/model"
	"github.com/facade-dev/facade/authz/internal/policytest"
)

// FuzzNormalLineReadsBackAsTheSameLine: a line's usage key (NormalLine)
// read as casbin reads policy.csv gives the same type and fields, so two
// different lines never share a history and one line keeps its own
// however it is spaced or quoted.
func FuzzNormalLineReadsBackAsTheSameLine(f *testing.F) {
	m, err := model.NewModelFromString(policytest.Families["deny-keymatch"])
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{
		"p, alice, account:1, view_account, allow", `p, "group:Domain Users ", account:*, view_account, deny`,
		`g,"a,b", team:x`, `"g" , carol,team:web`, `p, "say ""hi""", obj, act, allow`, "g, student:s1, class:c1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		r, msg := parseRule(text, m)
		if msg != "" {
			return
		}
		key := NormalLine(r)
		again, msg := parseRule(key, m)
		if msg != "" || again.Type != r.Type || !slices.Equal(again.Fields, r.Fields) {
			t.Fatalf("%q keyed as %q, which reads back as %q %q (%s)", text, key, again.Type, again.Fields, msg)
		}
		if NormalLine(again) != key {
			t.Fatalf("%q: the key of the key is %q, not %q", text, NormalLine(again), key)
		}
	})
}
