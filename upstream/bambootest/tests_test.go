package bambootest_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/facade-dev/facade/upstream/bambootest"
)

// Bamboo keeps tests per job: a plan result carries counts only, and
// lists its tests below its jobs (stages.stage.results.result.testResults).
func TestPlanResultsCountTestsAndJobsListThem(t *testing.T) {
	srv, ts := bambootest.NewTestServer(t)
	api := ts.URL + "/rest/api/latest/result/"
	for n, failed := range map[int][]int{1: {3}, 2: {3, 7}, 3: {7}} {
		srv.AddResult("P-T", n, "Failed")
		srv.SetTests("P-T-"+strconv.Itoa(n), bambootest.Tests{Count: 10, Failed: failed, Skipped: []int{9}, Quarantined: []int{8}})
	}
	const deep = "testResults.failedTests.testResult.errors"
	_, body := get(t, api+"P-T-3?expand="+deep)
	doc := decode(t, body)
	if _, ok := doc["testResults"]; ok {
		t.Errorf("a plan result lists tests: %v", doc["testResults"])
	}
	for name, want := range map[string]float64{"successfulTestCount": 7, "failedTestCount": 1, "quarantinedTestCount": 1, "skippedTestCount": 1} {
		if doc[name] != want {
			t.Errorf("%s = %v, want %v", name, doc[name], want)
		}
	}
	_, body = get(t, api+"P-T-3?expand=stages.stage.results.result."+deep)
	job := at(decode(t, body), "stages", "stage", 0, "results", "result", 0)
	failing := at(job, "testResults", "failedTests", "testResult").([]any)
	if len(failing) != 1 || at(failing[0], "methodName") != "case00007" || !strings.Contains(at(failing[0], "errors", "error", 0, "message").(string), "\tat ") {
		t.Errorf("the plan's failing tests below its job: %v", failing)
	}
	// On the job result: every list, new, existing and fixed told against
	// the previous build (2 failed 3 and 7; 3 fails 7).
	_, body = get(t, api+"P-T-JOB1-3?expand=testResults.allTests,testResults.newFailedTests,testResults.existingFailedTests.testResult,testResults.fixedTests.testResult,testResults.quarantinedTests.testResult,testResults.skippedTests.testResult")
	tr := at(decode(t, body), "testResults")
	names := func(list string) (out []string) {
		items, _ := at(tr, list, "testResult").([]any)
		for _, it := range items {
			out = append(out, at(it, "methodName").(string)+"/"+at(it, "status").(string))
		}
		return out
	}
	checks := map[string]string{
		"existingFailedTests": "case00007/failed", "fixedTests": "case00003/successful",
		"quarantinedTests": "case00008/failed", "skippedTests": "case00009/skipped",
	}
	for list, want := range checks {
		if got := strings.Join(names(list), ","); got != want {
			t.Errorf("%s: %s, want %s", list, got, want)
		}
	}
	if len(names("allTests")) != 10 || at(tr, "newFailed") != 0.0 || at(tr, "failedTests", "testResult") != nil {
		t.Errorf("allTests, newFailed count or an unasked list: %v", tr)
	}
}
