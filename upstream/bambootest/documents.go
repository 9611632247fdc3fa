package bambootest

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// doc is one JSON object of a response.
type doc = map[string]any

func link(href string) doc { return doc{"href": href, "rel": "self"} }

// collapsed is Bamboo's unexpanded list: paging numbers only.
func collapsed(n int) doc { return doc{"size": n, "start-index": 0, "max-result": n} }

func projectDoc(base string, p *project, withPlans bool) doc {
	visible := visiblePlans(p)
	d := doc{
		"expand": "plans",
		"key":    p.key,
		"name":   p.name,
		"link":   link(base + "/rest/api/latest/project/" + p.key),
		"plans":  collapsed(len(visible)),
	}
	if p.description != "" {
		d["description"] = p.description
	}
	if withPlans {
		plans := make([]any, 0, len(visible))
		for _, pl := range visible {
			plans = append(plans, fullPlanDoc(base, pl, nil))
		}
		d["plans"] = list("plan", plans)
	}
	return d
}

func visiblePlans(p *project) []*plan {
	var out []*plan
	for _, pl := range p.plans {
		if !pl.hidden {
			out = append(out, pl)
		}
	}
	return out
}

// planDoc is the short plan object found inside a result.
func planDoc(base string, p *plan) doc {
	return doc{
		"shortName": p.name,
		"shortKey":  p.shortKey,
		"type":      "chain",
		"enabled":   true,
		"link":      link(base + "/rest/api/latest/plan/" + p.key()),
		"key":       p.key(),
		"name":      p.fullName(),
		"planKey":   doc{"key": p.key()},
	}
}

// fullPlanDoc is the plan object of plan lists and of /plan/{key}:
// branches and stages are listed when expanded.
func fullPlanDoc(base string, p *plan, ex expansion) doc {
	d := planDoc(base, p)
	maps.Copy(d, doc{
		"expand":                    "actions,stages,branches,variableContext",
		"projectKey":                p.project.key,
		"projectName":               p.project.name,
		"isFavourite":               p.favourite,
		"isActive":                  false,
		"isBuilding":                false,
		"averageBuildTimeInSeconds": 46,
		"actions":                   collapsed(3),
		"stages":                    collapsed(1),
		"branches":                  collapsed(len(visibleBranches(p))),
	})
	if ex.has("branches") {
		items := []any{}
		for _, b := range visibleBranches(p) {
			items = append(items, branchDoc(base, b))
		}
		d["branches"] = list("branch", items)
	}
	if ex.has("stages") {
		d["stages"] = list("stage", []any{doc{"name": "Default Stage", "description": "", "manual": false}})
	}
	if p.master != nil {
		d["master"] = planDoc(base, p.master)
	}
	return d
}

// branchDoc is a branch in a branch list.
func branchDoc(base string, b *plan) doc {
	return doc{
		"description": "", "shortName": b.name, "shortKey": b.shortKey, "enabled": true,
		"link": link(base + "/rest/api/latest/plan/" + b.key()), "key": b.key(), "name": b.fullName(),
	}
}

func visibleBranches(p *plan) []*plan {
	var out []*plan
	for _, b := range p.branches {
		if !b.hidden {
			out = append(out, b)
		}
	}
	return out
}

// Fixed clock of the generated history: build N started N×3h after it.
var epoch = time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)

func (r *result) started() time.Time { return epoch.Add(time.Duration(r.number) * 3 * time.Hour) }
func (r *result) duration() time.Duration {
	return time.Duration(30+(r.number*37)%300)*time.Second + time.Duration(r.number%1000)*time.Millisecond
}
func (r *result) completed() time.Time { return r.started().Add(r.duration()) }

// expansion is what an expand parameter asked for below one object, as
// the names directly under it ("artifacts", "stages") and deeper paths
// ("stages.stage.results").
type expansion map[string]bool

// under is the expansion below name ("testResults" of
// "testResults.failedTests": "failedTests").
func (e expansion) under(name string) expansion {
	out := expansion{}
	for k := range e {
		if rest, ok := strings.CutPrefix(k, name+"."); ok {
			out[rest] = true
		} else if k == name {
			out[""] = false
		}
	}
	return out
}

// has reports whether name, or a path below it, was asked for.
func (e expansion) has(name string) bool {
	for k := range e {
		if k == name || strings.HasPrefix(k, name+".") {
			return true
		}
	}
	return false
}

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

func artifactsDoc(base string, r *result, artifacts []Artifact, expand bool) doc {
	d := collapsed(len(artifacts))
	if expand {
		items := make([]any, 0, len(artifacts))
		for _, a := range artifacts {
			items = append(items, artifactDoc(base, r, a))
		}
		d = list("artifact", items)
	}
	return d
}

func artifactDoc(base string, r *result, a Artifact) doc {
	jobResult := r.plan.key() + "-" + a.ProducerJobKey + "-" + strconv.Itoa(r.number)
	d := doc{"name": a.Name, "producerJobKey": jobResult, "shared": a.Shared}
	if a.isBuildLog() {
		planJob := r.plan.key() + "-" + a.ProducerJobKey
		d["link"] = link(base + "/download/" + planJob + "/build_logs/" + jobResult + ".log")
		return d
	}
	dir := a.ProducerJobKey
	if a.Shared {
		dir = "shared"
	}
	d["link"] = link(base + "/browse/" + r.key() + "/artifact/" + dir + "/" + url.PathEscape(a.urlName()) + "/")
	d["size"] = a.size()
	d["prettySizeDescription"] = prettySize(a.size())
	return d
}

// prettySize writes sizes as Bamboo does: 974 KB, 6 MB, 442 MB.
func prettySize(n int64) string {
	switch {
	case n < 1<<10:
		return strconv.FormatInt(n, 10) + " bytes"
	case n < 1<<20:
		return strconv.FormatInt(n>>10, 10) + " KB"
	case n < 1<<30:
		return strconv.FormatInt(n>>20, 10) + " MB"
	}
	return strconv.FormatFloat(float64(n)/(1<<30), 'f', 1, 64) + " GB"
}

// wantsJSON mimics Bamboo's negotiation: JSON for a .json suffix or an
// Accept that names application/json, XML otherwise.
func wantsJSON(r *http.Request) bool {
	return strings.HasSuffix(r.URL.Path, ".json") || strings.Contains(r.Header.Get("Accept"), "application/json")
}

// writeDoc answers d as JSON, or as XML under a root element when the
// request did not ask for JSON.
func writeDoc(w http.ResponseWriter, r *http.Request, root string, d doc) {
	writeStatusDoc(w, r, http.StatusOK, root, d)
}

// writeError answers Bamboo's error document.
func writeError(w http.ResponseWriter, r *http.Request, status int, message string) {
	writeStatusDoc(w, r, status, "status", doc{"message": message, "status-code": status})
}

func writeStatusDoc(w http.ResponseWriter, r *http.Request, status int, root string, d doc) {
	var body []byte
	if wantsJSON(r) {
		body, _ = json.Marshal(d) // maps of strings, numbers and bools: cannot fail
		w.Header().Set("Content-Type", "application/json")
	} else {
		body = toXML(root, d)
		w.Header().Set("Content-Type", "application/xml")
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// toXML renders d the way Bamboo's XML looks closely enough for a client
// to notice it is not JSON: objects as elements, lists as repeated elements.
func toXML(root string, d doc) []byte {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>`)
	writeXML(&b, root, d)
	return b.Bytes()
}

func writeXML(b *bytes.Buffer, name string, v any) {
	switch v := v.(type) {
	case doc:
		b.WriteString("<" + name + ">")
		for _, k := range slices.Sorted(maps.Keys(v)) {
			writeXML(b, k, v[k])
		}
		b.WriteString("</" + name + ">")
	case []any:
		for _, item := range v {
			writeXML(b, name, item)
		}
	default:
		b.WriteString("<" + name + ">")
		_ = xml.EscapeText(b, []byte(fmt.Sprint(v)))
		b.WriteString("</" + name + ">")
	}
}
