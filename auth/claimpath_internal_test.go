package auth

import (
	"slices"
	"testing"
)

// TestClaimPaths: the path forms FACADE_ROLE_CLAIM and FACADE_GROUPS_CLAIM
// take, and where each leads.
func TestClaimPaths(t *testing.T) {
	for in, want := range map[string]claimPath{
		"role":                            {"role"},
		"realm_access.roles":              {"realm_access", "roles"},
		"resource_access.facade.roles":    {"resource_access", "facade", "roles"},
		`["name.with.dot"]`:               {"name.with.dot"},
		`resource_access["my.app"].roles`: {"resource_access", "my.app", "roles"},
		`["a\"]b"]["c"]`:                  {`a"]b`, "c"},
		"https://facade/role":             {"https://facade/role"},
	} {
		got, err := parseClaimPath(in)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: %q, %v; want %q", in, got, err, want)
		}
	}
	claims := map[string]any{"resource_access": map[string]any{"my.app": map[string]any{"roles": []any{"student"}}}, "role": "x"}
	p, _ := parseClaimPath(`resource_access["my.app"].roles`)
	if v, _ := p.lookup(claims).([]any); len(v) != 1 {
		t.Errorf("lookup: %v", p.lookup(claims))
	}
	p, _ = parseClaimPath("role.deeper")
	if p.lookup(claims) != nil {
		t.Error("a path through a string found something")
	}
}

// FuzzClaimPath: any setting either is refused or gives a path of
// non-empty names that looks up without panicking.
func FuzzClaimPath(f *testing.F) {
	for _, s := range []string{"role", "realm_access.roles", `["a.b"].c`, `[`, `["\u00e9"]`, "a..b", `[""]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := parseClaimPath(s)
		if err != nil {
			return
		}
		if len(p) == 0 || len(p) > maxPathLen || slices.Contains(p, "") {
			t.Fatalf("%q gave %q", s, p)
		}
		_ = p.lookup(map[string]any{"a": map[string]any{"b": 1}})
	})
}
