package upstream_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/facade-dev/facade/upstream"
)

// The wire type each sample decodes into.
var sampleTypes = map[string]func() any{
	"01_project_list_default_expand__mibex.json":     func() any { return new(upstream.ProjectsPage) },
	"02_plan_list_page__mibex.json":                  func() any { return new(upstream.PlansPage) },
	"03_result_list_with_artifacts__mibex.json":      func() any { return new(upstream.ResultsPage) },
	"04_result_list_empty_artifacts__mibex.json":     func() any { return new(upstream.ResultsPage) },
	"05_single_result_expanded_labels_typo3.json":    func() any { return new(upstream.Result) },
	"06_single_result_with_changes_2011__jarib.json": func() any { return new(upstream.Result) },
	"07_result_minimal_restChainResult__jarib.json":  func() any { return new(upstream.Result) },
	"08_project_list_collapsed_plans__lita.json":     func() any { return new(upstream.ProjectsPage) },
	"09_job_artifacts_fragment__BAM-17122.json":      func() any { return new(upstream.ArtifactList) },
}

func TestEverySampleRoundTrips(t *testing.T) {
	files, err := filepath.Glob("testdata/*.json")
	if err != nil || len(files) != len(sampleTypes) {
		t.Fatalf("found %d samples, expected %d (err %v)", len(files), len(sampleTypes), err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			original, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			newValue := sampleTypes[filepath.Base(file)]
			if newValue == nil {
				t.Fatal("no wire type registered for this sample")
			}
			typed := newValue()
			if err := json.Unmarshal(original, typed); err != nil {
				t.Fatal(err)
			}
			encoded, err := json.Marshal(typed)
			if err != nil {
				t.Fatal(err)
			}
			if !sameJSON(t, original, encoded) {
				t.Fatalf("round trip changed the document:\n%s", encoded)
			}
			again := newValue()
			if err := json.Unmarshal(encoded, again); err != nil {
				t.Fatal(err)
			}
			if reencoded, err := json.Marshal(again); err != nil || string(reencoded) != string(encoded) {
				t.Fatalf("encoding is not stable (err %v):\n%s\n%s", err, encoded, reencoded)
			}
		})
	}
}

func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(va, vb)
}

func readSample(t *testing.T, name string, into any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, into); err != nil {
		t.Fatal(err)
	}
}

func TestTypedFieldsOfSamples(t *testing.T) {
	var results upstream.ResultsPage
	readSample(t, "03_result_list_with_artifacts__mibex.json", &results)
	r := results.Results.Result[0]
	a := r.Artifacts.Artifact[0]
	if r.Key != "MIRA-RSS-14" || r.BuildNumber != 14 || r.BuildState != "Successful" || r.LifeCycleState != "Finished" ||
		r.PlanResultKey.EntityKey.Key != "MIRA-RSS" || r.PlanResultKey.ResultNumber != 14 || r.Plan.PlanKey.Key != "MIRA-RSS" {
		t.Fatalf("result fields: %+v", r)
	}
	if a.Name != "Activity Streams for Stash" || a.Size != 6554084 || !a.Shared || a.ProducerJobKey != "MIRA-RSS-BUIL-14" ||
		a.PrettySizeDescription != "6 MB" || !strings.HasSuffix(a.Link.Href, "/artifact/shared/Activity-Streams-for-Stash/target") {
		t.Fatalf("artifact fields: %+v", a)
	}
	if _, ok := r.Extra["buildTestSummary"]; !ok {
		t.Fatal("unmodelled member buildTestSummary not kept in Extra")
	}

	var empty upstream.ResultsPage
	readSample(t, "04_result_list_empty_artifacts__mibex.json", &empty)
	if list := empty.Results.Result[0].Artifacts.Artifact; list == nil || len(list) != 0 {
		t.Fatalf("an empty artifact list must decode as empty, not absent: %#v", list)
	}

	var collapsed upstream.ProjectsPage
	readSample(t, "08_project_list_collapsed_plans__lita.json", &collapsed)
	p := collapsed.Projects.Project[0]
	if p.Plans.Plan != nil || p.Plans.Size != 1 || collapsed.Projects.Size != 6 {
		t.Fatalf("collapsed plans: %+v", p.Plans)
	}

	var logs upstream.ArtifactList
	readSample(t, "09_job_artifacts_fragment__BAM-17122.json", &logs)
	if logs.Artifact[0].Name != "Build log" || logs.Artifact[0].Size != 0 {
		t.Fatalf("build log: %+v", logs.Artifact[0])
	}
}

// The proxy filters lists, recounts sizes and rewrites links: the encoding
// must show exactly those changes and keep everything else.
func TestEditsSurviveEncoding(t *testing.T) {
	var page upstream.ProjectsPage
	readSample(t, "08_project_list_collapsed_plans__lita.json", &page)
	page.Projects.Project = page.Projects.Project[:0] // nobody may see anything
	page.Projects.Size, page.Projects.MaxResult = 0, 0
	page.Link.Href = "https://facade.example/rest/api/latest/project"

	out, err := json.Marshal(page)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"expand":"projects","link":{"href":"https://facade.example/rest/api/latest/project","rel":"self"},` +
		`"projects":{"size":0,"expand":"project","start-index":0,"max-result":0,"project":[]}}`
	if !sameJSON(t, out, []byte(want)) {
		t.Fatalf("got %s", out)
	}
}

func TestNilItemListCollapses(t *testing.T) {
	var results upstream.ResultsPage
	readSample(t, "03_result_list_with_artifacts__mibex.json", &results)
	results.Results.Result[0].Artifacts.Artifact = nil // the caller did not ask for artifacts
	out, err := json.Marshal(results)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), `"artifact"`) || !strings.Contains(string(out), `"artifacts":{"size":1,"start-index":0,"max-result":1}`) {
		t.Fatalf("artifacts not collapsed: %s", out)
	}
}

func TestZeroValuesEncodeOnlyWhatIsSet(t *testing.T) {
	out, err := json.Marshal(upstream.ResultList{Result: []upstream.Result{{Key: "A-B-1", BuildNumber: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"size":0,"start-index":0,"max-result":0,"result":[{"key":"A-B-1","buildNumber":1}]}`
	if !sameJSON(t, out, []byte(want)) {
		t.Fatalf("got %s", out)
	}
	out, _ = json.Marshal(upstream.Project{Key: "P", Plans: upstream.PlanList{Size: 2}})
	if !sameJSON(t, out, []byte(`{"key":"P","plans":{"size":2,"start-index":0,"max-result":0}}`)) {
		t.Fatalf("got %s", out)
	}
}

func TestPresentZeroAndNullMembersSurvive(t *testing.T) {
	in := `{"name":"x","shared":false,"size":0,"prettySizeDescription":null,"link":{"href":"h","rel":"self","type":"text/html"}}`
	var a upstream.Artifact
	if err := json.Unmarshal([]byte(in), &a); err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(a)
	if !sameJSON(t, []byte(in), out) {
		t.Fatalf("got %s", out)
	}
	a.PrettySizeDescription = "1 KB" // setting a member that was null replaces the null
	out, _ = json.Marshal(a)
	if !strings.Contains(string(out), `"prettySizeDescription":"1 KB"`) || strings.Count(string(out), "prettySizeDescription") != 1 {
		t.Fatalf("got %s", out)
	}
}

func TestBadMemberTypeIsAnError(t *testing.T) {
	var list upstream.ProjectList
	if err := json.Unmarshal([]byte(`{"size":"three"}`), &list); err == nil {
		t.Fatal("a string size was accepted")
	}
	if err := json.Unmarshal([]byte(`[1,2]`), &list); err == nil {
		t.Fatal("an array was accepted as an object")
	}
}

// The test server's documents decode into the wire types and round-trip,
// so the proxy's tests exercise the same shapes as the samples.
func TestTestServerDocumentsRoundTrip(t *testing.T) {
	_, client := newPair(t, upstream.Config{})
	projects, err := client.Projects(context.Background(), upstream.ProjectQuery{Expand: []string{upstream.ExpandProjectPlans}})
	if err != nil {
		t.Fatal(err)
	}
	results, err := client.Results(context.Background(), "INFRA", "IMAGES", upstream.ResultQuery{Expand: []string{upstream.ExpandResultArtifacts}})
	if err != nil {
		t.Fatal(err)
	}
	var pp upstream.ProjectsPage
	var rp upstream.ResultsPage
	for _, c := range []struct {
		raw []byte
		v   any
	}{{projects, &pp}, {results, &rp}} {
		if err := json.Unmarshal(c.raw, c.v); err != nil {
			t.Fatal(err)
		}
		out, err := json.Marshal(c.v)
		if err != nil || !sameJSON(t, c.raw, out) {
			t.Fatalf("round trip changed the document (err %v)", err)
		}
	}
	artifacts := rp.Results.Result[0].Artifacts.Artifact
	image := artifacts[len(artifacts)-1]
	if image.Name != "base-image.img" || image.Size != 200<<20 || image.PrettySizeDescription != "200 MB" || !image.Shared {
		t.Fatalf("large artifact entry: %+v", image)
	}
	if pp.Projects.Project[0].Plans.Plan[0].PlanKey.Key != "PROJ-CORE" {
		t.Fatal("plan key missing")
	}
}

func BenchmarkDecodeEncodeResultsPage(b *testing.B) {
	raw, err := os.ReadFile("testdata/03_result_list_with_artifacts__mibex.json")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		var page upstream.ResultsPage
		if err := json.Unmarshal(raw, &page); err != nil {
			b.Fatal(err)
		}
		if _, err := json.Marshal(page); err != nil {
			b.Fatal(err)
		}
	}
}
