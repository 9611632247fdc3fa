package proxy

import (
	"bytes"
	"testing"
)

// TestEqualViewsShareOneCopy: two members of one team see exactly the
// same project list, so their views are one copy in memory (one copy stays
// in the processor's caches under many principals); a principal who sees
// something else keeps a view of their own, whatever the cache holds.
func TestEqualViewsShareOneCopy(t *testing.T) {
	f := newFixture(t, options{policy: testPolicy + "g, gus, team:platform\n"})
	const target = "/rest/api/latest/project?expand=projects.project.plans"
	frank, gus, erin := f.get("frank", target), f.get("gus", target), f.get("erin", target)
	if frank.Code != 200 || gus.Code != 200 || erin.Code != 200 {
		t.Fatalf("statuses %d %d %d", frank.Code, gus.Code, erin.Code)
	}
	if !bytes.Equal(frank.Body.Bytes(), gus.Body.Bytes()) || bytes.Equal(frank.Body.Bytes(), erin.Body.Bytes()) {
		t.Fatal("the fixture's premise: frank and gus see the same list, erin another")
	}
	held := map[string][]byte{}
	f.h.views.mu.Lock()
	for k, it := range f.h.views.items {
		if k.kind == kindProjects {
			held[k.principal.ID] = it.val.body
		}
	}
	f.h.views.mu.Unlock()
	if len(held["frank"]) == 0 || &held["frank"][0] != &held["gus"][0] {
		t.Error("frank's and gus's equal views are two copies")
	}
	if !bytes.Equal(held["erin"], erin.Body.Bytes()) {
		t.Error("erin's view is not the list she was served")
	}
	if got := f.get("erin", target); !bytes.Equal(got.Body.Bytes(), erin.Body.Bytes()) {
		t.Error("erin's warm view changed")
	}
}
