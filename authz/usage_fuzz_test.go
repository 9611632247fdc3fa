package authz

import (
	"slices"
	"testing"

	"github.com/casbin/casbin/v2/model"
)

// FuzzNormalLineReadsBackAsTheSameLine: a line's usage key (normalLine)
// read as casbin reads policy.csv gives the same type and fields, so two
// different lines never share a history and one line keeps its own
// however it is spaced or quoted.
func FuzzNormalLineReadsBackAsTheSameLine(f *testing.F) {
	m, err := model.NewModelFromString(families["deny-keymatch"])
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
		key := normalLine(r)
		again, msg := parseRule(key, m)
		if msg != "" || again.ptype != r.ptype || !slices.Equal(again.fields, r.fields) {
			t.Fatalf("%q keyed as %q, which reads back as %q %q (%s)", text, key, again.ptype, again.fields, msg)
		}
		if normalLine(again) != key {
			t.Fatalf("%q: the key of the key is %q, not %q", text, normalLine(again), key)
		}
	})
}
