package proxy

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// Favourites belong to the person: marked through Bamboo's own routes,
// kept by the facade per principal, shown as isFavourite to that caller
// only, kept by ?favourite, and never sent upstream.

func TestFavouritesAreThePersonsNotTheServiceAccounts(t *testing.T) {
	f := newFixture(t, options{})
	// The demo's service account has WEB-NIGHTLY as a favourite upstream:
	// nobody here marked it, so nobody sees it as theirs.
	doc, _ := f.getOK("carol", api+"/plan/WEB-NIGHTLY")
	if doc["isFavourite"] != false {
		t.Fatalf("the service account's favourite reached carol: isFavourite %v", doc["isFavourite"])
	}
	if rec := f.do(http.MethodPost, "carol", api+"/plan/PROJ-CORE/favourite"); rec.Code != http.StatusNoContent {
		t.Fatalf("marking: %d %s", rec.Code, rec.Body)
	}
	// Twice is the same as once.
	if rec := f.do(http.MethodPost, "carol", api+"/plan/PROJ-CORE/favourite"); rec.Code != http.StatusNoContent {
		t.Fatalf("marking again: %d %s", rec.Code, rec.Body)
	}
	doc, _ = f.getOK("carol", api+"/plan/PROJ-CORE")
	if doc["isFavourite"] != true {
		t.Errorf("carol's own favourite: isFavourite %v", doc["isFavourite"])
	}
	// frank may see the same plan; it is not his favourite.
	doc, _ = f.getOK("frank", api+"/plan/PROJ-CORE")
	if doc["isFavourite"] != false {
		t.Errorf("carol's favourite shows for frank: isFavourite %v", doc["isFavourite"])
	}
	// In lists too, for carol alone.
	for _, target := range []string{"/plan", "/project?expand=projects.project.plans", "/project/PROJ?expand=plans"} {
		carol := favouriteKeys(f, "carol", api+target)
		frank := favouriteKeys(f, "frank", api+target)
		if !slices.Equal(carol, []string{"PROJ-CORE"}) || len(frank) != 0 {
			t.Errorf("%s: isFavourite true for carol on %v, for frank on %v", target, carol, frank)
		}
	}
	if rec := f.do(http.MethodDelete, "carol", api+"/plan/PROJ-CORE/favourite"); rec.Code != http.StatusNoContent {
		t.Fatalf("unmarking: %d %s", rec.Code, rec.Body)
	}
	if doc, _ := f.getOK("carol", api+"/plan/PROJ-CORE"); doc["isFavourite"] != false {
		t.Errorf("after unmarking: isFavourite %v", doc["isFavourite"])
	}
	for _, c := range f.bamboo.Calls() {
		if strings.Contains(c.Path, "favourite") || strings.Contains(c.RawQuery, "favourite") || c.Method != http.MethodGet {
			t.Errorf("favourites reached upstream: %s %s?%s", c.Method, c.Path, c.RawQuery)
		}
	}
}

// favouriteKeys are the keys of the objects in a document with
// isFavourite true.
func favouriteKeys(f *fixture, sub, target string) []string {
	doc, _ := f.getOK(sub, target)
	var out []string
	walkObjects(any(doc), func(m map[string]any) {
		if m["isFavourite"] == true {
			out = append(out, m["key"].(string))
		}
	})
	slices.Sort(out)
	return out
}

func TestMarkingAFavouriteNeedsViewOnThePlan(t *testing.T) {
	f := newFixture(t, options{})
	for _, method := range []string{http.MethodPost, http.MethodDelete} {
		// dave may view MOBILE-IOS only; the refusal is the same whether
		// the plan exists or not.
		for _, plan := range []string{"PROJ-CORE", "NOPE-NOTHING"} {
			if rec := f.do(method, "dave", api+"/plan/"+plan+"/favourite"); rec.Code != http.StatusForbidden {
				t.Errorf("%s %s as dave: %d %s, want 403", method, plan, rec.Code, rec.Body)
			}
		}
		if rec := f.do(method, "dave", api+"/plan/proj%2Fcore/favourite"); rec.Code != http.StatusBadRequest {
			t.Errorf("%s a malformed key: %d, want 400", method, rec.Code)
		}
	}
	if keys := favouriteKeys(f, "dave", api+"/plan"); len(keys) != 0 {
		t.Errorf("a refused mark was kept: %v", keys)
	}
}

// TestFavouriteFilterKeepsTheCallersFavourites: ?favourite (bare, as
// Bamboo documents it, or =true) on every list keeps the caller's
// favourite plans, paged after filtering; =false keeps everything.
func TestFavouriteFilterKeepsTheCallersFavourites(t *testing.T) {
	f := newFixture(t, options{})
	for _, plan := range []string{"PROJ-LIB", "WEB-NIGHTLY"} {
		if rec := f.do(http.MethodPost, "carol", api+"/plan/"+plan+"/favourite"); rec.Code != http.StatusNoContent {
			t.Fatalf("marking %s: %d %s", plan, rec.Code, rec.Body)
		}
	}
	cases := []struct {
		target string
		list   []string
		want   []string
	}{
		{"/plan?favourite", []string{"plans", "plan"}, []string{"PROJ-LIB", "WEB-NIGHTLY"}},
		{"/plan?favourite=true&max-results=1&start-index=1", []string{"plans", "plan"}, []string{"WEB-NIGHTLY"}},
		{"/project?favourite", []string{"projects", "project"}, []string{"PROJ", "WEB"}},
		{"/result?favourite", []string{"results", "result"}, []string{"PROJ-LIB-4", "WEB-NIGHTLY-5"}},
		{"/result/PROJ?favourite=TRUE", []string{"results", "result"}, []string{"PROJ-LIB-4"}},
		{"/result/PROJ-CORE?favourite", []string{"results", "result"}, []string{}},
		{"/plan/PROJ-CORE/branch?favourite", []string{"branches", "branch"}, []string{}},
	}
	for _, c := range cases {
		doc, _ := f.getOK("carol", api+c.target)
		if got := itemKeys(path(doc, c.list...)); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.target, got, c.want)
		}
	}
	doc, _ := f.getOK("carol", api+"/project?favourite&expand=projects.project.plans")
	for _, p := range list(path(doc, "projects", "project")) {
		for _, pl := range list(path(p, "plans", "plan")) {
			if k := path(pl, "key"); k != "PROJ-LIB" && k != "WEB-NIGHTLY" {
				t.Errorf("/project?favourite lists plan %v", k)
			}
		}
	}
	if n := num(path(doc, "projects", "size")); n != 2 {
		t.Errorf("/project?favourite size %d, want 2", n)
	}
	// false keeps everything carol may see; frank, who marked nothing,
	// keeps nothing.
	if doc, _ := f.getOK("carol", api+"/plan?favourite=false"); num(path(doc, "plans", "size")) != 4 {
		t.Errorf("favourite=false: %v", path(doc, "plans", "size"))
	}
	if doc, _ := f.getOK("frank", api+"/plan?favourite"); num(path(doc, "plans", "size")) != 0 {
		t.Errorf("frank's favourites: %v", path(doc, "plans"))
	}
}

// TestAtlassianPythonClientsFavouriteCallsWork: atlassian-python-api
// (atlassian/bamboo.py, base_list_call and rest_client.request) sends
// favourite and cloverEnabled as bare flags after its parameters; these are
// its exact query strings for projects(favourite=True,
// clover_enabled=True) and plan_results("PROJ", "LIB", favourite=True).
func TestAtlassianPythonClientsFavouriteCallsWork(t *testing.T) {
	f := newFixture(t, options{})
	if rec := f.do(http.MethodPost, "carol", api+"/plan/PROJ-LIB/favourite"); rec.Code != http.StatusNoContent {
		t.Fatalf("marking: %d %s", rec.Code, rec.Body)
	}
	// PROJ-LIB is the demo's plan with Clover.
	doc, _ := f.getOK("carol", api+"/project?max-results=25&elements_key=projects&element_key=project&favourite&cloverEnabled")
	if got := itemKeys(path(doc, "projects", "project")); !slices.Equal(got, []string{"PROJ"}) {
		t.Errorf("projects(favourite=True, clover_enabled=True): %v", got)
	}
	doc, _ = f.getOK("carol", api+"/result/PROJ-LIB?max-results=25&elements_key=results&element_key=result&favourite")
	if got := itemKeys(path(doc, "results", "result")); len(got) == 0 || !strings.HasPrefix(got[0], "PROJ-LIB-") {
		t.Errorf("plan_results(favourite=True): %v", got)
	}
	// Clover is Bamboo's to say: it was asked, with the flag it documents.
	asked := false
	for _, c := range f.bamboo.Calls() {
		if strings.HasSuffix(c.Path, "/project.json") && strings.Contains(c.RawQuery, "cloverEnabled=true") {
			asked = true
		}
	}
	if !asked {
		t.Error("cloverEnabled did not reach upstream")
	}
	// cloverEnabled alone keeps the Clover plans only.
	doc, _ = f.getOK("carol", api+"/plan?cloverEnabled")
	if got := itemKeys(path(doc, "plans", "plan")); !slices.Equal(got, []string{"PROJ-LIB"}) {
		t.Errorf("/plan?cloverEnabled: %v", got)
	}
}

// walkObjects calls fn for every object in v.
func walkObjects(v any, fn func(map[string]any)) {
	switch t := v.(type) {
	case []any:
		for _, e := range t {
			walkObjects(e, fn)
		}
	case map[string]any:
		fn(t)
		for _, e := range t {
			walkObjects(e, fn)
		}
	}
}

// TestAFavouritePlaceholderCannotComeFromUpstream: upstream text shaped
// like a favourite placeholder loses its marker when the document is
// rewritten, as the public base's placeholder does, so a caller's
// favourites are set only on plan objects' isFavourite: never inside
// text, never on a member Bamboo sent.
func TestAFavouritePlaceholderCannotComeFromUpstream(t *testing.T) {
	forged := favouritePrefix + "PROJ-CORE\x00"
	doc := map[string]any{"buildReason": forged, forged: "x", "plan": map[string]any{"key": "PROJ-LIB", "isFavourite": true}}
	body, err := encoded(newRewriter(doc).rewriteTree(doc))
	if err != nil {
		t.Fatal(err)
	}
	v := markFavourites(finished(body, "https://facade.example"), map[string]bool{"PROJ-CORE": true, "PROJ-LIB": true})
	var out map[string]any
	if err := json.Unmarshal(v.body, &out); err != nil {
		t.Fatalf("%v: %s", err, v.body)
	}
	if path(out, "plan", "isFavourite") != true || strings.Count(string(v.body), "true") != 1 || len(out) != 3 {
		t.Errorf("favourites set elsewhere than the plan object's isFavourite: %s", v.body)
	}
	for name, value := range out {
		if strings.Contains(name, "facade-favourite") || strings.Contains(fmt.Sprint(value), "facade-favourite") {
			t.Errorf("the placeholder's text reached the answer: %s", v.body)
		}
	}
}
