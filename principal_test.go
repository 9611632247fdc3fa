package facade

import (
	"slices"
	"testing"
)

// TestPrincipalKeyTellsGroupListsApart: cache keys built from principals
// (per-principal views) must differ whenever the groups differ, whatever
// characters the names hold, and give the principal back.
func TestPrincipalKeyTellsGroupListsApart(t *testing.T) {
	lists := [][]string{nil, {"a"}, {"a", "b"}, {"a,b"}, {"a\x00b"}, {"1:a"}, {"a", ""}, {"", "a"}, {"ab"}}
	seen := map[PrincipalKey][]string{}
	for _, groups := range lists {
		p := Principal{ID: "zoe", Role: "developer", Groups: groups}
		k := p.Key()
		if other, dup := seen[k]; dup {
			t.Fatalf("groups %q and %q share a key", groups, other)
		}
		seen[k] = groups
		if back := k.Principal(); back.ID != p.ID || back.Role != p.Role || !slices.Equal(back.Groups, p.Groups) {
			t.Fatalf("key of %+v gives back %+v", p, back)
		}
	}
}
