package server_test

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// Every build list is filtered per principal and the filtered answers are
// cached (docs/contract.md §6): two principals with different grants asking
// the same URL must each get exactly their own items, whichever asks first.
// A cache key that lost the principal serves the first caller's items to
// the second; this test asks every list route in both orders on one
// fixture and compares each answer with the upstream's own list filtered by
// the grants written below (not by the service's authorizer).

// listGrants are the build grants of the two principals, as testPolicy and
// the extra lines give them: project keys (the whole project) and plan
// keys (one plan or branch).
var listGrants = map[string][]string{
	"carol": {"PROJ", "WEB-NIGHTLY"},     // team:platform's project plus her plan
	"nadia": {"PROJ-CORE", "PROJ-CORE1"}, // one plan and one of its branches
}

var nadiaLines = []string{"p, nadia, plan:PROJ-CORE, view", "p, nadia, plan:PROJ-CORE1, view"}

// listRoutes are the build routes that answer a list (or a document with
// a list inside), each asked as a client would. upstream is what the test
// asks Bamboo for the whole truth (the same path, lists expanded), and
// collapsed names the lists the facade answers as a bare count: item list
// (as in upstream) -> the collapsed member, whose size must be the number
// of visible items.
var listRoutes = []struct {
	path, upstream string
	collapsed      map[string]string
}{
	{path: "/project?expand=projects.project.plans"},
	{path: "/project", upstream: "/project?expand=projects.project.plans", collapsed: map[string]string{"plan": "plans"}},
	{path: "/project/PROJ?expand=plans"},
	{path: "/plan"},
	{path: "/plan/PROJ-CORE?expand=branches"},
	{path: "/plan/PROJ-CORE", upstream: "/plan/PROJ-CORE?expand=branches", collapsed: map[string]string{"branch": "branches"}},
	{path: "/plan/PROJ-CORE/branch"},
	{path: "/result"},
	{path: "/result/PROJ"},
	{path: "/result/PROJ-CORE"}, // a plan's own results: the same for both
}

func TestEveryListRouteShowsEachPrincipalExactlyItsOwnItems(t *testing.T) {
	const api = "/rest/api/latest"
	for _, order := range [][]string{{"carol", "nadia"}, {"nadia", "carol"}} {
		t.Run(strings.Join(order, "-first-then-"), func(t *testing.T) {
			e := newEnv(t, withBuilds(), withPolicyLines(nadiaLines...))
			for _, rt := range listRoutes {
				up := rt.upstream
				if up == "" {
					up = rt.path
				}
				truth := e.upstreamItems(t, api+up)
				want := map[string]listItems{}
				for _, who := range order {
					want[who] = truth.visibleTo(listGrants[who], rt.collapsed)
				}
				if len(want["nadia"].keys)+len(want["nadia"].sizes) == 0 {
					t.Fatalf("%s: nadia sees nothing; the comparison proves nothing", rt.path)
				}
				if want["carol"].equal(want["nadia"]) != (rt.path == "/result/PROJ-CORE") {
					t.Fatalf("%s: the fixture gives the two principals the same items: %v", rt.path, want["carol"])
				}
				for _, who := range order {
					r := e.do(req{method: "GET", path: api + rt.path, token: token(t, who, "developer")})
					if r.status != http.StatusOK {
						t.Fatalf("%s asks %s: %d %s", who, rt.path, r.status, r.body)
					}
					got := itemsOf(t, r.body)
					got.sizes = onlySizes(got.sizes, rt.collapsed)
					if !got.equal(want[who]) {
						t.Errorf("%s asks %s:\n got %v\nwant %v", who, rt.path, got, want[who])
					}
				}
			}
		})
	}
}

// upstreamItems asks the upstream itself, with the service's token.
func (e *env) upstreamItems(t *testing.T, path string) listItems {
	t.Helper()
	hr, err := http.NewRequest("GET", e.bambooURL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	hr.Header.Set("Authorization", "Bearer "+bambooToken)
	hr.Header.Set("Accept", "application/json")
	res, err := http.DefaultClient.Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("upstream %s: %d %s", path, res.StatusCode, b)
	}
	return itemsOf(t, string(b))
}

// listItems are the items of each list in a document: every array of
// objects with a "key", by the array's member name, with the key of the
// object holding the list; and the sizes of collapsed lists by
// "holder/member".
type listItems struct {
	keys  map[string][]heldKey
	sizes map[string]int
}

type heldKey struct{ holder, key string }

func (a listItems) String() string {
	var b strings.Builder
	for _, list := range slices.Sorted(maps.Keys(a.keys)) {
		fmt.Fprintf(&b, "%s:", list)
		for _, k := range a.keys[list] {
			b.WriteString(" " + k.key)
		}
		b.WriteString("; ")
	}
	fmt.Fprintf(&b, "sizes %v", a.sizes)
	return b.String()
}

func (a listItems) equal(b listItems) bool {
	return maps.EqualFunc(a.keys, b.keys, slices.Equal) && maps.Equal(a.sizes, b.sizes)
}

// visibleTo keeps the items the grants reach: a plan, branch or result
// whose plan (or project) is granted, and a project granted whole or
// holding a visible plan. Lists named in collapsed become their count.
func (a listItems) visibleTo(grants []string, collapsed map[string]string) listItems {
	granted := func(key string) bool {
		plan := planOfItem(key)
		project, _, _ := strings.Cut(plan, "-")
		return slices.Contains(grants, plan) || slices.Contains(grants, project)
	}
	out := listItems{keys: map[string][]heldKey{}, sizes: map[string]int{}}
	for list, items := range a.keys {
		for _, it := range items {
			show := granted(it.key)
			if list == "project" {
				show = slices.Contains(grants, it.key) || slices.ContainsFunc(a.keys["plan"], func(p heldKey) bool {
					return p.holder == it.key && granted(p.key)
				})
			}
			if !show {
				continue
			}
			if member, ok := collapsed[list]; ok {
				out.sizes[it.holder+"/"+member]++
				continue
			}
			out.keys[list] = append(out.keys[list], it)
		}
	}
	return out
}

// planOfItem is the plan key of a plan, branch or result key: PROJ-PLAN,
// PROJ-PLAN-7 -> PROJ-PLAN.
func planOfItem(key string) string {
	parts := strings.Split(key, "-")
	return strings.Join(parts[:min(2, len(parts))], "-")
}

// onlySizes keeps the sizes of the collapsed lists named.
func onlySizes(sizes map[string]int, collapsed map[string]string) map[string]int {
	out := map[string]int{}
	for k, n := range sizes {
		_, member, _ := strings.Cut(k, "/")
		if slices.Contains(slices.Collect(maps.Values(collapsed)), member) {
			out[k] = n
		}
	}
	return out
}

// itemsOf collects the items of every list in a JSON document.
func itemsOf(t *testing.T, body string) listItems {
	t.Helper()
	var doc any
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatalf("not JSON: %v: %s", err, body)
	}
	out := listItems{keys: map[string][]heldKey{}, sizes: map[string]int{}}
	var walk func(holder, name string, v any)
	walk = func(holder, name string, v any) {
		switch t := v.(type) {
		case []any:
			for _, e := range t {
				if m, ok := e.(map[string]any); ok {
					if k, ok := m["key"].(string); ok {
						out.keys[name] = append(out.keys[name], heldKey{holder, k})
					}
				}
				walk(holder, name, e)
			}
		case map[string]any:
			if n, ok := t["size"].(float64); ok && len(t) == 3 { // collapsed: size, start-index, max-result
				out.sizes[holder+"/"+name] = int(n)
			}
			if k, ok := t["key"].(string); ok {
				holder = k
			}
			for member, e := range t {
				walk(holder, member, e)
			}
		}
	}
	walk("", "", doc)
	for _, items := range out.keys {
		slices.SortFunc(items, func(a, b heldKey) int { return strings.Compare(a.holder+" "+a.key, b.holder+" "+b.key) })
	}
	return out
}
