package proxy

import (
	"strings"
	"testing"
)

// Why a build failed, without downloading anything: Bamboo's test expands
// where Bamboo has them (on job results, and on plan results below their
// jobs: a plan result itself carries test counts), and the commits
// (changes, vcsRevisions), passed on as asked and answered as Bamboo does.

func TestFailedResultsAnswerTheirFailingTests(t *testing.T) {
	f := newFixture(t, options{})
	const deep = "testResults.failedTests.testResult.errors"
	const viaJobs = "stages.stage.results.result." + deep
	failingOf := func(target string, doc any, at ...string) []any {
		tests := list(path(doc, append(at, "testResults", "failedTests", "testResult")...))
		if len(tests) != num(path(doc, append(at, "testResults", "failed")...)) || len(tests) == 0 {
			t.Fatalf("%s: %d failing tests listed, %v counted", target, len(tests), path(doc, append(at, "testResults", "failed")...))
		}
		return tests
	}
	plan, _ := f.getOK("carol", api+"/result/WEB-NIGHTLY-5?expand="+viaJobs+",changes,vcsRevisions")
	job := firstOf(list(path(firstOf(list(path(plan, "stages", "stage"))), "results", "result")))
	byJob, _ := f.getOK("carol", api+"/result/WEB-NIGHTLY-JOB1-5?expand="+deep)
	for target, tests := range map[string][]any{"plan result below its jobs": failingOf("plan", job), "job result": failingOf("job", byJob)} {
		for _, tr := range tests {
			errs := list(path(tr, "errors", "error"))
			msg, _ := path(firstOf(errs), "message").(string)
			if path(tr, "className") == nil || path(tr, "methodName") == nil || !strings.Contains(msg, "\tat ") {
				t.Errorf("%s: a failing test without class, name or message and stack: %v", target, tr)
			}
		}
	}
	if num(path(plan, "failedTestCount")) != len(failingOf("plan", job)) || path(plan, "testResults") != nil {
		t.Errorf("the plan result's own counts: failed %v, testResults %v", path(plan, "failedTestCount"), path(plan, "testResults"))
	}
	// The deepest value was forwarded as asked, not cut to the stages.
	asked := false
	for _, c := range f.bamboo.Calls() {
		if strings.Contains(c.RawQuery, "stages.stage.results.result.testResults.failedTests.testResult.errors") {
			asked = true
		}
	}
	if !asked {
		t.Error("upstream was not asked for the failing tests' errors below the jobs")
	}
	if c := firstOf(list(path(plan, "changes", "change"))); path(c, "changesetId") == nil || path(c, "comment") == nil {
		t.Errorf("changes not listed: %v", path(plan, "changes"))
	}
	if r := firstOf(list(path(plan, "vcsRevisions", "vcsRevision"))); path(r, "vcsRevisionKey") == nil {
		t.Errorf("vcsRevisions not listed: %v", path(plan, "vcsRevisions"))
	}
	// Result lists take them below results.result.
	doc, _ := f.getOK("carol", api+"/result/WEB-NIGHTLY?buildstate=Failed&expand=results.result."+viaJobs)
	r := firstOf(list(path(doc, "results", "result")))
	j := firstOf(list(path(firstOf(list(path(r, "stages", "stage"))), "results", "result")))
	if len(list(path(j, "testResults", "failedTests", "testResult"))) == 0 {
		t.Errorf("result list without failing tests: %v", path(r, "stages"))
	}
	// Asked for nothing, the failing tests are not listed (counts only).
	doc, _ = f.getOK("carol", api+"/result/WEB-NIGHTLY-JOB1-5")
	if list(path(doc, "testResults", "failedTests", "testResult")) != nil {
		t.Error("failing tests listed without the expand")
	}
}

// Every list Bamboo has on a job result is honoured (new, existing and
// fixed failures, quarantined, skipped, all), each with its tests and
// their errors, and reaches the client as Bamboo wrote it.
func TestEveryTestListOfAJobResult(t *testing.T) {
	f := newFixture(t, options{})
	for _, l := range testLists {
		target := api + "/result/WEB-NIGHTLY-JOB1-5?expand=testResults." + l + ".testResult.errors"
		doc, _ := f.getOK("carol", target)
		got := path(doc, "testResults", l, "testResult")
		if got == nil {
			t.Errorf("%s: not expanded: %v", l, path(doc, "testResults", l))
		}
		if n := num(path(doc, "testResults", l, "size")); n != len(list(got)) {
			t.Errorf("%s: size %d, %d listed", l, n, len(list(got)))
		}
	}
}

func firstOf(l []any) any {
	if len(l) == 0 {
		return nil
	}
	return l[0]
}
