package bambootest_test

import (
	"strconv"
	"testing"

	"github.com/facade-dev/facade/upstream/bambootest"
)

// An organization's Bamboo pages as Bamboo does: 25 a page by default,
// size the total on the project list, the count returned on result
// lists, and a capped server cuts a larger page to its cap.
func TestOrganizationPagesAsBambooDoes(t *testing.T) {
	s, ts := bambootest.NewTestServer(t, bambootest.WithPageCap(300))
	bambootest.Organization(s, 400, 10)
	api := ts.URL + "/rest/api/latest"

	_, body := get(t, api+"/project?expand=projects.project.plans")
	list := at(decode(t, body), "projects").(map[string]any)
	if list["size"] != 400.0 || list["max-result"] != 25.0 || len(list["project"].([]any)) != 25 {
		t.Fatalf("default page: size %v max-result %v, %d projects; want 400, 25, 25", list["size"], list["max-result"], len(list["project"].([]any)))
	}
	_, body = get(t, api+"/project?max-results=1000&start-index=250")
	list = at(decode(t, body), "projects").(map[string]any)
	if list["size"] != 400.0 || list["start-index"] != 250.0 || list["max-result"] != 150.0 || at(list, "project", 0, "key") != "S250" {
		t.Fatalf("last page: %v %v %v %v; want size 400 from 250, 150 items, S250 first", list["size"], list["start-index"], list["max-result"], at(list, "project", 0, "key"))
	}
	_, body = get(t, api+"/result?max-results=1000")
	results := at(decode(t, body), "results").(map[string]any)
	if results["size"] != 300.0 || results["max-result"] != 300.0 {
		t.Fatalf("capped result page: size %v max-result %v; want 300 and 300 (the cap)", results["size"], results["max-result"])
	}
	_, body = get(t, api+"/result?max-results=1000&start-index=3900")
	results = at(decode(t, body), "results").(map[string]any)
	last := at(results, "result", 99).(map[string]any)
	if results["size"] != 100.0 || last["key"] != bambootest.OrgPlanKey(399, 9)+"-"+strconv.Itoa(10+9+1) || last["buildState"] != bambootest.OrgLatestState(399, 9) {
		t.Fatalf("last result page: size %v, last %v %v", results["size"], last["key"], last["buildState"])
	}
}

// A build moves as people watch it: started (listed only with
// includeAllStates), its log growing, finished with its state.
func TestBuildStartsRunsAndFinishes(t *testing.T) {
	s, ts := bambootest.NewTestServer(t)
	bambootest.Organization(s, 1, 2)
	api := ts.URL + "/rest/api/latest"
	key := s.StartBuild("S000-P1")
	if key != "S000-P1-13" {
		t.Fatalf("started %s, want S000-P1-13", key)
	}
	_, body := get(t, api+"/result/"+key)
	if d := decode(t, body); d["lifeCycleState"] != "InProgress" || d["buildState"] != "Unknown" {
		t.Fatalf("running: %v %v", d["lifeCycleState"], d["buildState"])
	}
	s.AppendLog(key, "JOB1", "line one\n")
	s.AppendLog(key, "JOB1", "line two\n")
	if _, log := get(t, ts.URL+"/download/S000-P1-JOB1/build_logs/S000-P1-JOB1-13.log"); string(log) != "line one\nline two\n" {
		t.Fatalf("log %q", log)
	}
	_, body = get(t, api+"/result/S000-P1?includeAllStates=true&max-results=1")
	if at(decode(t, body), "results", "result", 0, "lifeCycleState") != "InProgress" {
		t.Fatalf("includeAllStates lists the running build first: %s", body)
	}
	s.Finish(key, "Failed")
	_, body = get(t, api+"/result/S000-P1/latest")
	if d := decode(t, body); d["key"] != key || d["buildState"] != "Failed" || d["lifeCycleState"] != "Finished" {
		t.Fatalf("finished: %v %v %v", d["key"], d["buildState"], d["lifeCycleState"])
	}
}
