package proxy

import (
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	openapi "github.com/facade-dev/facade/api"
)

// TestOpenAPIDescribesEveryBuildPath: the build paths api/openapi.json
// describes with a GET are exactly the paths of the route table, .json
// twins included (compared by shape: parameter names aside).
func TestOpenAPIDescribesEveryBuildPath(t *testing.T) {
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(openapi.OpenAPI, &doc); err != nil {
		t.Fatal(err)
	}
	param := regexp.MustCompile(`\{[^}]+\}`)
	echoParam := regexp.MustCompile(`:[A-Za-z]+|\*$`)
	var described, served []string
	for path, ops := range doc.Paths {
		isBuild := strings.HasPrefix(path, rest+"/") || strings.HasPrefix(path, "/browse/") || strings.HasPrefix(path, "/download/")
		if _, ok := ops["get"]; ok && isBuild {
			described = append(described, "GET "+param.ReplaceAllString(path, "{}"))
		}
		_, post := ops["post"]
		if _, del := ops["delete"]; post && del && isBuild {
			described = append(described, "POST DELETE "+param.ReplaceAllString(path, "{}"))
		}
	}
	for _, ep := range Endpoints() {
		method := "GET "
		if ep.Write {
			method = "POST DELETE "
		}
		served = append(served, method+echoParam.ReplaceAllString(ep.Pattern, "{}"))
	}
	slices.Sort(described)
	slices.Sort(served)
	if !slices.Equal(described, served) {
		t.Errorf("api/openapi.json describes GET on\n  %s\nthe route table serves\n  %s",
			strings.Join(described, "\n  "), strings.Join(served, "\n  "))
	}
}

// TestEveryRouteExampleAnswers: each route's examples answer 200 for
// carol (the server's tests validate the same calls against
// api/openapi.json), and every route has one.
func TestEveryRouteExampleAnswers(t *testing.T) {
	f := newFixture(t, options{})
	for _, rt := range Routes {
		if len(rt.Examples) == 0 && rt.View != ViewFavourite { // a write: favourites_test.go
			t.Errorf("route %s has no example", rt.Name)
		}
		for _, ex := range rt.Examples {
			if rec := f.get("carol", ex); rec.Code != http.StatusOK {
				t.Errorf("%s example %s: %d %.200s", rt.Name, ex, rec.Code, rec.Body)
			}
		}
	}
}
