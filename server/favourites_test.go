package server_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/favourites"
)

// TestFavouritesArePerPersonWrites: Bamboo's own favourite routes, as a
// write (anti-forgery), kept per person; plan objects then carry the
// caller's isFavourite.
func TestFavouritesArePerPersonWrites(t *testing.T) {
	e := newEnv(t, withBuilds(), withPolicyLines("g, frank, team:platform")) // frank sees what carol sees
	carol, frank := token(t, "carol", "developer"), token(t, "frank", "developer")
	const fav = "/rest/api/latest/plan/PROJ-CORE/favourite"
	if r := e.do(req{method: "POST", path: fav, token: carol, header: map[string]string{"X-XSRF-TOKEN": ""}}); r.status != http.StatusForbidden || !strings.Contains(r.body, "xsrf") {
		t.Fatalf("a favourite without the anti-forgery header: %d %s", r.status, r.body)
	}
	if r := e.do(req{method: "POST", path: fav, token: carol}); r.status != http.StatusNoContent || r.body != "" {
		t.Fatalf("marking: %d %s", r.status, r.body)
	}
	isFavourite := func(tok string) bool {
		r := e.do(req{method: "GET", path: "/rest/api/latest/plan/PROJ-CORE", token: tok})
		if r.status != http.StatusOK {
			t.Fatalf("reading the plan: %d %s", r.status, r.body)
		}
		return strings.Contains(r.body, `"isFavourite":true`)
	}
	if !isFavourite(carol) || isFavourite(frank) {
		t.Errorf("isFavourite: carol %v, frank %v; want true, false", isFavourite(carol), isFavourite(frank))
	}
	if r := e.do(req{method: "DELETE", path: fav, token: carol, header: map[string]string{"X-XSRF-TOKEN": "t0k3n"}}); r.status != http.StatusNoContent {
		t.Fatalf("unmarking: %d %s", r.status, r.body)
	}
	if isFavourite(carol) {
		t.Error("still a favourite after DELETE")
	}
	// A plan carol may not see is refused before anything is kept.
	if r := e.do(req{method: "POST", path: "/rest/api/latest/plan/MOBILE-IOS/favourite", token: carol}); r.status != http.StatusForbidden {
		t.Errorf("another team's plan: %d %s", r.status, r.body)
	}
}

// TestFavouritesAreBoundedPerPerson: one person keeps at most
// favourites.MaxPerPerson; the next is a 409 saying what to do.
func TestFavouritesAreBoundedPerPerson(t *testing.T) {
	e := newEnv(t, withBuilds())
	store := favourites.New(e.rdb, favourites.Config{})
	carol := facade.Principal{ID: "carol"}
	for i := range favourites.MaxPerPerson {
		if err := store.Mark(context.Background(), carol, fmt.Sprintf("PROJ-P%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	r := e.do(req{method: "POST", path: "/rest/api/latest/plan/PROJ-CORE/favourite", token: token(t, "carol", "developer")})
	if r.status != http.StatusConflict || r.problem(t)["code"] != "favourites-full" {
		t.Fatalf("one favourite too many: %d %s", r.status, r.body)
	}
	// One already kept is marked again without complaint.
	if r := e.do(req{method: "POST", path: "/rest/api/latest/plan/PROJ-P7/favourite", token: token(t, "carol", "developer")}); r.status != http.StatusNoContent {
		t.Errorf("marking a kept one again: %d %s", r.status, r.body)
	}
}
