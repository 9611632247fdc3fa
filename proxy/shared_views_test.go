package proxy

import (
	"bytes"
	"fmt"
	"strings"
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
	for k, v := range f.h.docs.heldViews() {
		if k.kind == kindProjects {
			held[k.principal.ID] = v.body
		}
	}
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

// TestATeamLargerThanTheViewBudgetStaysWarm: a team's members see one list,
// held once, so a budget that fits a few copies of it keeps every member's
// view warm however many members ask in turn (bench/run.sh's 2,000
// principals once rebuilt every view: each member's copy was counted in
// full, and round-robin evicted each before its next request).
func TestATeamLargerThanTheViewBudgetStaysWarm(t *testing.T) {
	const members = 200
	var policy strings.Builder
	policy.WriteString(testPolicy)
	for i := range members {
		fmt.Fprintf(&policy, "g, member%03d, team:platform\n", i)
	}
	const target = "/rest/api/latest/project?expand=projects.project.plans"
	probe := newFixture(t, options{policy: policy.String()})
	size := int64(probe.get("member000", target).Body.Len())
	f := newFixture(t, options{policy: policy.String(), viewBytes: 4 * size})
	first := f.get("member000", target).Body.Bytes()
	for round := range 2 {
		for i := range members {
			got := f.get(fmt.Sprintf("member%03d", i), target)
			if got.Code != 200 || !bytes.Equal(got.Body.Bytes(), first) {
				t.Fatalf("round %d, member%03d: status %d, or not the team's list", round, i, got.Code)
			}
		}
	}
	views := f.h.docs.heldViews()
	bodies := map[*byte]bool{}
	for _, v := range views {
		bodies[&v.body[0]] = true
	}
	if n := len(views); n != members {
		t.Errorf("%d of %d members' views are held; the rest were built again", n, members)
	}
	if n := len(bodies); n != 1 {
		t.Errorf("%d bodies held for one team's list, want 1", n)
	}
}
