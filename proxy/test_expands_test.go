package proxy

import (
	"strings"
	"testing"
)

// Why a build failed, without downloading anything: Bamboo's test expands
// on plan and job results, and the commits (changes, vcsRevisions), passed
// on as asked and answered as Bamboo does.

func TestFailedResultsAnswerTheirFailingTests(t *testing.T) {
	f := newFixture(t, options{})
	const deep = "testResults.failedTests.testResult.errors"
	for _, target := range []string{
		"/result/WEB-NIGHTLY-5?expand=" + deep + ",changes,vcsRevisions", // a plan result
		"/result/WEB-NIGHTLY-JOB1-5?expand=" + deep,                      // its first job
	} {
		doc, _ := f.getOK("carol", api+target)
		tests := list(path(doc, "testResults", "failedTests", "testResult"))
		if len(tests) != num(path(doc, "testResults", "failed")) || len(tests) == 0 {
			t.Fatalf("%s: %d failing tests listed, %v counted", target, len(tests), path(doc, "testResults", "failed"))
		}
		for _, tr := range tests {
			errs := list(path(tr, "errors", "error"))
			msg, _ := path(firstOf(errs), "message").(string)
			if path(tr, "className") == nil || path(tr, "methodName") == nil || !strings.Contains(msg, "\tat ") {
				t.Errorf("%s: a failing test without class, name or message and stack: %v", target, tr)
			}
		}
	}
	// The deepest value was forwarded as asked, not cut to testResults.
	asked := false
	for _, c := range f.bamboo.Calls() {
		if strings.Contains(c.RawQuery, "expand=testResults.failedTests.testResult.errors") ||
			strings.Contains(c.RawQuery, "testResults.failedTests.testResult.errors") {
			asked = true
		}
	}
	if !asked {
		t.Error("upstream was not asked for the failing tests' errors")
	}
	doc, _ := f.getOK("carol", api+"/result/WEB-NIGHTLY-5?expand=changes,vcsRevisions")
	if c := firstOf(list(path(doc, "changes", "change"))); path(c, "changesetId") == nil || path(c, "comment") == nil {
		t.Errorf("changes not listed: %v", path(doc, "changes"))
	}
	if r := firstOf(list(path(doc, "vcsRevisions", "vcsRevision"))); path(r, "vcsRevisionKey") == nil {
		t.Errorf("vcsRevisions not listed: %v", path(doc, "vcsRevisions"))
	}
	// Result lists take them below results.result.
	doc, _ = f.getOK("carol", api+"/result/WEB-NIGHTLY?buildstate=Failed&expand=results.result."+deep)
	r := firstOf(list(path(doc, "results", "result")))
	if len(list(path(r, "testResults", "failedTests", "testResult"))) == 0 {
		t.Errorf("result list without failing tests: %v", path(r, "testResults"))
	}
	// Asked for nothing, the failing tests are not listed (counts only).
	doc, _ = f.getOK("carol", api+"/result/WEB-NIGHTLY-5")
	if list(path(doc, "testResults", "failedTests", "testResult")) != nil {
		t.Error("failing tests listed without the expand")
	}
}

func firstOf(l []any) any {
	if len(l) == 0 {
		return nil
	}
	return l[0]
}
