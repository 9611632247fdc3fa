package bambootest

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// A result's documents: the result itself and what it expands to
// (stages and job results, changes, issues, labels, tests, logs).

func resultDoc(base string, r *result, ex expansion) doc {
	const stamp, pretty = "2006-01-02T15:04:05.000-07:00", "Mon, 2 Jan, 03:04 PM"
	passed, failed := 20+r.number%10, 0
	summary := strconv.Itoa(passed) + " passed"
	if r.state == "Failed" {
		failed = 1 + r.number%3
		summary = fmt.Sprintf("%d of %d failed", failed, passed+failed)
	}
	reason := `Changes by <a href="` + base + `/browse/user/developer">Developer</a>`
	return doc{
		"expand":                   "changes,metadata,plan,vcsRevisions,artifacts,comments,labels,jiraIssues,stages",
		"link":                     link(base + "/rest/api/latest/result/" + r.key()),
		"plan":                     planDoc(base, r.plan),
		"planName":                 r.plan.name,
		"projectName":              r.plan.project.name,
		"buildResultKey":           r.key(),
		"lifeCycleState":           r.lifeCycle,
		"id":                       r.id,
		"buildStartedTime":         r.started().Format(stamp),
		"prettyBuildStartedTime":   r.started().Format(pretty),
		"buildCompletedTime":       r.completed().Format(stamp),
		"buildCompletedDate":       r.completed().Format(stamp),
		"prettyBuildCompletedTime": r.completed().Format(pretty),
		"buildDurationInSeconds":   int(r.duration().Seconds()),
		"buildDuration":            r.duration().Milliseconds(),
		"buildDurationDescription": fmt.Sprintf("%d seconds", int(r.duration().Seconds())),
		"vcsRevisionKey":           revision(r),
		"vcsRevisions":             vcsRevisionsDoc(r, ex.has("vcsRevisions")),
		"testResults":              testResultsDoc(r, r.jobs(), ex.under("testResults")),
		"buildTestSummary":         summary,
		"successfulTestCount":      passed,
		"failedTestCount":          failed,
		"continuable":              r.continuable,
		"buildReason":              reason,
		"reasonSummary":            reason,
		"artifacts":                artifactsDoc(base, r, r.artifacts, ex.has("artifacts")),
		"changes":                  changesDoc(r, ex.has("changes"), ex.has("changes.change.files")),
		"comments":                 namedList("comment", r.comments, "content", ex.has("comments")),
		"labels":                   namedList("label", r.labels, "name", ex.has("labels")),
		"jiraIssues":               issuesDoc(r, ex.has("jiraIssues")),
		"stages":                   stagesDoc(base, r, ex),
		"key":                      r.key(),
		"planResultKey":            doc{"key": r.key(), "entityKey": doc{"key": r.plan.key()}, "resultNumber": r.number},
		"state":                    r.state,
		"buildState":               r.state,
		"number":                   r.number,
		"buildNumber":              r.number,
	}
}

// list is Bamboo's expanded list of item.
func list(item string, items []any) doc {
	return doc{"size": len(items), "expand": item, "start-index": 0, "max-result": len(items), item: items}
}

// namedList is a list of simple objects with one text member (labels,
// comments), collapsed unless expanded.
func namedList(item string, values []string, member string, expand bool) doc {
	if !expand {
		return collapsed(len(values))
	}
	items := make([]any, 0, len(values))
	for _, v := range values {
		items = append(items, doc{member: v})
	}
	return list(item, items)
}

func issuesDoc(r *result, expand bool) doc {
	if !expand {
		return collapsed(len(r.issues))
	}
	items := make([]any, 0, len(r.issues))
	for _, k := range r.issues {
		items = append(items, doc{"key": k, "url": doc{"href": "https://jira.example.com/browse/" + k, "rel": "self"}})
	}
	return list("issue", items)
}

func changesDoc(r *result, expand, files bool) doc {
	if !expand {
		return collapsed(1)
	}
	change := doc{
		"author": "Developer", "userName": "developer", "fullName": "Dee Developer",
		"changesetId": revision(r),
		"comment":     fmt.Sprintf("Change behind build %d", r.number),
		"date":        r.started().Add(-time.Hour).Format("2006-01-02T15:04:05.000-07:00"),
		"files":       collapsed(2),
	}
	if files {
		change["files"] = list("file", []any{
			doc{"name": "src/main/java/com/example/Service.java", "revision": revision(r)},
			doc{"name": "src/test/java/com/example/ServiceTest.java", "revision": revision(r)},
		})
	}
	return list("change", []any{change})
}

// revision is the result's commit id, 40 hex digits as Git writes it.
func revision(r *result) string {
	sum := sha1.Sum([]byte(r.key()))
	return hex.EncodeToString(sum[:])
}

// vcsRevisionsDoc is the revision of each repository a result built.
func vcsRevisionsDoc(r *result, expand bool) doc {
	if !expand {
		return collapsed(1)
	}
	return list("vcsRevision", []any{doc{
		"repositoryId": 1, "repositoryName": r.plan.project.name + " repository",
		"vcsRevisionKey": revision(r),
	}})
}

// stagesDoc is the result's one stage; its job results are listed when
// stages.stage.results is expanded.
func stagesDoc(base string, r *result, ex expansion) doc {
	if !ex.has("stages") {
		return collapsed(1)
	}
	stage := doc{"name": "Default Stage", "state": r.state, "lifeCycleState": r.lifeCycle, "manual": false}
	jobs := r.jobs()
	if ex["stages.stage.results"] || ex.has("stages.stage.results.result") {
		items := make([]any, 0, len(jobs))
		for _, j := range jobs {
			items = append(items, jobResultDoc(base, r, j, expansion{}))
		}
		stage["results"] = list("result", items)
	} else {
		stage["results"] = collapsed(len(jobs))
	}
	return list("stage", []any{stage})
}

// jobResultDoc is the result of one job of r (/result/K-P-J-N).
func jobResultDoc(base string, r *result, job string, ex expansion) doc {
	key := r.plan.key() + "-" + job + "-" + strconv.Itoa(r.number)
	var artifacts []Artifact
	for _, a := range r.artifacts {
		if a.ProducerJobKey == job {
			artifacts = append(artifacts, a)
		}
	}
	d := doc{
		"expand":         "artifacts,comments,labels,jiraIssues,logEntries,testResults",
		"link":           link(base + "/rest/api/latest/result/" + key),
		"key":            key,
		"buildResultKey": key,
		"jobName":        jobName(job),
		"planResultKey":  doc{"key": key, "entityKey": doc{"key": r.plan.key() + "-" + job}, "resultNumber": r.number},
		"state":          r.state,
		"buildState":     r.state,
		"lifeCycleState": r.lifeCycle,
		"number":         r.number,
		"buildNumber":    r.number,
		"artifacts":      artifactsDoc(base, r, artifacts, ex.has("artifacts")),
		"comments":       collapsed(0),
		"labels":         collapsed(0),
		"jiraIssues":     collapsed(0),
		"logEntries":     logEntriesDoc(r, job, ex.has("logEntries")),
		"testResults":    testResultsDoc(r, []string{job}, ex.under("testResults")),
	}
	return d
}

func logEntriesDoc(r *result, job string, expand bool) doc {
	lines := strings.Split(strings.TrimSpace(string(generatedLog(r, job))), "\n")
	if !expand {
		return collapsed(len(lines))
	}
	items := make([]any, 0, len(lines))
	for _, l := range lines {
		items = append(items, doc{"log": l, "unstyledLog": l})
	}
	return list("logEntry", items)
}

// testResultsDoc is Bamboo's testResults of a result (every job's tests)
// or of one job: counts, and with testResults.failedTests(.testResult)
// expanded the failing tests, each with its errors (message and stack)
// under testResults.failedTests.testResult.errors. Only the first job of
// a failed build fails tests, as in a real build where one suite breaks.
func testResultsDoc(r *result, jobs []string, ex expansion) doc {
	var failing []failedTest
	passed := 0
	for _, job := range jobs {
		passed += jobTestsPassed(r, job)
		failing = append(failing, failedTests(r, job)...)
	}
	d := doc{
		"expand": "allTests,successfulTests,failedTests,newFailedTests,existingFailedTests,fixedTests,quarantinedTests,skippedTests",
		"all":    passed + len(failing), "successful": passed, "failed": len(failing),
		"newFailed": len(failing), "existingFailed": 0, "fixed": 0, "quarantined": 0, "skipped": 0,
		"allTests": collapsed(passed + len(failing)), "successfulTests": collapsed(passed),
		"failedTests": collapsed(len(failing)),
	}
	if !ex.has("failedTests") {
		return d
	}
	withErrors := ex.has("failedTests.testResult.errors")
	items := make([]any, 0, len(failing))
	for _, t := range failing {
		item := doc{
			"expand": "errors", "testCaseId": t.id, "className": t.className, "methodName": t.methodName,
			"status": "failed", "duration": 120 + t.id%900, "durationInSeconds": 0,
			"errors": collapsed(1),
		}
		if withErrors {
			item["errors"] = list("error", []any{doc{"message": t.message}})
		}
		items = append(items, item)
	}
	d["failedTests"] = list("testResult", items)
	return d
}

// failedTest is one failing test of a job's result.
type failedTest struct {
	id                             int64
	className, methodName, message string
}

// jobTestsPassed is how many tests of job passed in r.
func jobTestsPassed(r *result, job string) int {
	if job != defaultJob {
		return 0 // the build's tests run in its first job
	}
	return 20 + r.number%10
}

// failedTests are the tests job failed in r: 1 to 3 in the first job of
// a failed build, none otherwise.
func failedTests(r *result, job string) []failedTest {
	if r.state != "Failed" || job != defaultJob {
		return nil
	}
	pkg := "com.example." + strings.ToLower(r.plan.shortKey)
	cases := []struct{ class, method, message string }{
		{pkg + ".ApiTest", "servesBuild", "java.lang.AssertionError: expected:<200> but was:<500>"},
		{pkg + ".StoreTest", "keepsOrderUnderLoad", "org.opentest4j.AssertionFailedError: expected: <[1, 2, 3]> but was: <[1, 3, 2]>"},
		{pkg + ".ClientTest", "retriesOnTimeout", "java.net.SocketTimeoutException: Read timed out"},
	}
	out := make([]failedTest, 0, 3)
	for i, c := range cases[:1+r.number%3] {
		frames := fmt.Sprintf("\n\tat %s.%s(%s.java:%d)\n\tat java.base/jdk.internal.reflect.DirectMethodHandleAccessor.invoke(DirectMethodHandleAccessor.java:103)\n\tat org.junit.platform.engine.support.hierarchical.NodeTestTask.execute(NodeTestTask.java:151)",
			c.class, c.method, c.class[strings.LastIndexByte(c.class, '.')+1:], 40+i*17)
		out = append(out, failedTest{id: r.id*10 + int64(i), className: c.class, methodName: c.method, message: c.message + frames})
	}
	return out
}

// jobNames are the demo's job names (Bamboo shows a job by its name; the
// key is in its result key).
var jobNames = map[string]string{defaultJob: "Default Job", "PKG": "Package", "IMG": "Base image"}

func jobName(job string) string {
	if n, ok := jobNames[job]; ok {
		return n
	}
	return job
}
