package bambootest

import (
	"fmt"
	"slices"
	"strings"
)

// The tests a build ran, as Bamboo keeps them: per job. A plan result
// carries only their counts (successfulTestCount, failedTestCount,
// quarantinedTestCount, skippedTestCount); the tests themselves are listed
// on job results (testResults with allTests, successfulTests, failedTests,
// newFailedTests, existingFailedTests, fixedTests, quarantinedTests and
// skippedTests), and on a plan result only below its jobs
// (stages.stage.results.result.testResults...). New, existing and fixed
// failures are told against the plan's previous finished build.

// Tests is what one job of a build ran: Count tests, test i named by
// TestName, of which those listed failed, were skipped or were
// quarantined (failed, but set aside so that they do not fail the build);
// the others passed. A suite of 20,000 tests costs a few index lists:
// names and documents are generated when asked for.
type Tests struct {
	// Job is the job's short key ("JOB1", the default).
	Job         string
	Count       int
	Failed      []int
	Skipped     []int
	Quarantined []int
}

// TestName is the class and method of test i of the plan "PROJ-PLAN"'s
// generated suites ("com.example.core.Suite003Test", "case00170"): 50
// tests a class.
func TestName(planKey string, i int) (className, methodName string) {
	short := planKey[strings.LastIndexByte(planKey, '-')+1:]
	return fmt.Sprintf("com.example.%s.Suite%03dTest", strings.ToLower(short), i/50), fmt.Sprintf("case%05d", i)
}

// SetTests gives the result "PROJ-PLAN-N" the tests its jobs ran, one
// Tests per job, replacing the generated default (a few tests in JOB1,
// 1 to 3 of them failing in a failed build).
func (s *Builds) SetTests(resultKey string, suites ...Tests) {
	for i := range suites {
		if suites[i].Job == "" {
			suites[i].Job = defaultJob
		}
	}
	s.setResult(resultKey, func(r *result) { r.suites = slices.Clone(suites) })
}

// SetRevision makes the result "PROJ-PLAN-N" a build of VCS revision rev
// (by default each build has a revision of its own), as when a build is
// run again on the same commit.
func (s *Builds) SetRevision(resultKey, rev string) {
	s.setResult(resultKey, func(r *result) { r.revision = rev })
}

// Test outcomes as Bamboo writes a test's status.
const (
	statusPassed  = "successful"
	statusFailed  = "failed"
	statusSkipped = "skipped"
)

// testCase is one test of a job's result.
type testCase struct {
	id                             int64
	className, methodName, message string
	status                         string
	quarantined                    bool
}

func (t testCase) name() string { return t.className + "#" + t.methodName }

// failing: failed and not quarantined (Bamboo's failedTests).
func (t testCase) failing() bool { return t.status == statusFailed && !t.quarantined }

// jobs are the short keys of the result's jobs: every job with tests or
// artifacts, JOB1 first (every build has it).
func (r *result) jobs() []string {
	out := []string{defaultJob}
	for _, s := range r.suites {
		if !slices.Contains(out, s.Job) {
			out = append(out, s.Job)
		}
	}
	for _, a := range r.artifacts {
		if !slices.Contains(out, a.ProducerJobKey) {
			out = append(out, a.ProducerJobKey)
		}
	}
	return out
}

// tests are the tests job ran in r.
func (r *result) tests(job string) []testCase {
	if r.suites == nil {
		return r.defaultTests(job)
	}
	var out []testCase
	for si, s := range r.suites {
		if s.Job != job {
			continue
		}
		status := make([]string, s.Count)
		quarantined := make([]bool, s.Count)
		for _, i := range s.Failed {
			if i >= 0 && i < s.Count {
				status[i] = statusFailed
			}
		}
		for _, i := range s.Quarantined {
			if i >= 0 && i < s.Count {
				status[i], quarantined[i] = statusFailed, true
			}
		}
		for _, i := range s.Skipped {
			if i >= 0 && i < s.Count {
				status[i] = statusSkipped
			}
		}
		for i := range s.Count {
			class, method := TestName(r.plan.key(), i)
			t := testCase{id: r.id*100000 + int64(si*s.Count+i), className: class, methodName: method, status: statusPassed, quarantined: quarantined[i]}
			if status[i] != "" {
				t.status = status[i]
			}
			if t.status == statusFailed {
				t.message = fmt.Sprintf("java.lang.AssertionError: %s failed in build %d\n\tat %s.%s(%s.java:%d)",
					method, r.number, class, method, class[strings.LastIndexByte(class, '.')+1:], 10+i%90)
			}
			out = append(out, t)
		}
	}
	return out
}

// defaultTests: without SetTests, a build's tests run in JOB1: 20 to 29
// model tests that pass, and three named ones that pass too, except in a
// failed build, where 1 to 3 of them fail, with their messages and stacks.
func (r *result) defaultTests(job string) []testCase {
	if job != defaultJob {
		return nil
	}
	pkg := "com.example." + strings.ToLower(r.plan.shortKey)
	var out []testCase
	cases := []struct{ class, method, message string }{
		{pkg + ".ApiTest", "servesBuild", "java.lang.AssertionError: expected:<200> but was:<500>"},
		{pkg + ".StoreTest", "keepsOrderUnderLoad", "org.opentest4j.AssertionFailedError: expected: <[1, 2, 3]> but was: <[1, 3, 2]>"},
		{pkg + ".ClientTest", "retriesOnTimeout", "java.net.SocketTimeoutException: Read timed out"},
	}
	failing := 0
	if r.state == "Failed" {
		failing = 1 + r.number%3
	}
	for i, c := range cases {
		t := testCase{id: r.id*100 + int64(i), className: c.class, methodName: c.method, status: statusPassed}
		if i < failing {
			frames := fmt.Sprintf("\n\tat %s.%s(%s.java:%d)\n\tat java.base/jdk.internal.reflect.DirectMethodHandleAccessor.invoke(DirectMethodHandleAccessor.java:103)\n\tat org.junit.platform.engine.support.hierarchical.NodeTestTask.execute(NodeTestTask.java:151)",
				c.class, c.method, c.class[strings.LastIndexByte(c.class, '.')+1:], 40+i*17)
			t.status, t.message = statusFailed, c.message+frames
		}
		out = append(out, t)
	}
	for i := range 20 + r.number%10 {
		out = append(out, testCase{id: r.id*100 + 10 + int64(i), className: pkg + ".ModelTest", methodName: fmt.Sprintf("case%02d", i), status: statusPassed})
	}
	return out
}

// previous is the plan's finished build before r, or nil.
func (r *result) previous() *result {
	for _, p := range r.plan.results {
		if p.number < r.number && p.lifeCycle == lifeCycleFinished {
			return p
		}
	}
	return nil
}

// testCounts are a result's counts over its jobs.
type testCounts struct{ passed, failed, quarantined, skipped int }

func (r *result) testCounts() testCounts {
	var c testCounts
	for _, job := range r.jobs() {
		for _, t := range r.tests(job) {
			switch {
			case t.quarantined:
				c.quarantined++
			case t.status == statusFailed:
				c.failed++
			case t.status == statusSkipped:
				c.skipped++
			default:
				c.passed++
			}
		}
	}
	return c
}

// testLists are Bamboo's lists of a job result's testResults, in its order.
var testLists = []string{"allTests", "successfulTests", "failedTests", "newFailedTests", "existingFailedTests", "fixedTests", "quarantinedTests", "skippedTests"}

// testResultsDoc is Bamboo's testResults of one job of r: the counts, and
// each list asked for (testResults.failedTests, ...) with its tests
// (.testResult) and their errors (.testResult.errors).
func testResultsDoc(r *result, job string, ex expansion) doc {
	tests := r.tests(job)
	before := map[string]string{} // the previous build's outcome of each test: failing or not
	if p := r.previous(); p != nil {
		for _, t := range p.tests(job) {
			before[t.name()] = t.status
			if t.failing() {
				before[t.name()] = "failing"
			}
		}
	}
	in := map[string]func(testCase) bool{
		"allTests":            func(testCase) bool { return true },
		"successfulTests":     func(t testCase) bool { return t.status == statusPassed },
		"failedTests":         testCase.failing,
		"newFailedTests":      func(t testCase) bool { return t.failing() && before[t.name()] != "failing" },
		"existingFailedTests": func(t testCase) bool { return t.failing() && before[t.name()] == "failing" },
		"fixedTests":          func(t testCase) bool { return t.status == statusPassed && before[t.name()] == "failing" },
		"quarantinedTests":    func(t testCase) bool { return t.quarantined },
		"skippedTests":        func(t testCase) bool { return t.status == statusSkipped },
	}
	counts := map[string]int{}
	for _, t := range tests {
		for _, name := range testLists {
			if in[name](t) {
				counts[name]++
			}
		}
	}
	d := doc{
		"expand": strings.Join(testLists, ","),
		"all":    counts["allTests"], "successful": counts["successfulTests"], "failed": counts["failedTests"],
		"newFailed": counts["newFailedTests"], "existingFailed": counts["existingFailedTests"],
		"fixed": counts["fixedTests"], "quarantined": counts["quarantinedTests"], "skipped": counts["skippedTests"],
	}
	for _, name := range testLists {
		if !ex.has(name) {
			d[name] = collapsed(counts[name])
			continue
		}
		withErrors := ex.has(name + ".testResult.errors")
		items := make([]any, 0, counts[name])
		for _, t := range tests {
			if in[name](t) {
				items = append(items, testDoc(t, withErrors))
			}
		}
		d[name] = list("testResult", items)
	}
	return d
}

// testDoc is one test as Bamboo lists it.
func testDoc(t testCase, withErrors bool) doc {
	errs := 0
	if t.message != "" {
		errs = 1
	}
	d := doc{
		"expand": "errors", "testCaseId": t.id, "className": t.className, "methodName": t.methodName,
		"status": t.status, "duration": 120 + t.id%900, "durationInSeconds": 0,
		"errors": collapsed(errs),
	}
	if withErrors {
		items := []any{}
		if t.message != "" {
			items = append(items, doc{"message": t.message})
		}
		d["errors"] = list("error", items)
	}
	return d
}
