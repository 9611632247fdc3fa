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
	counts := r.testCounts()
	summary := strconv.Itoa(counts.passed) + " passed"
	switch {
	case counts.failed > 0:
		summary = fmt.Sprintf("%d of %d failed", counts.failed, counts.passed+counts.failed)
	case counts.passed == 0 && counts.skipped == 0:
		summary = "No tests found"
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
		"buildTestSummary":         summary,
		"successfulTestCount":      counts.passed,
		"failedTestCount":          counts.failed,
		"quarantinedTestCount":     counts.quarantined,
		"skippedTestCount":         counts.skipped,
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

// revision is the result's commit id, 40 hex digits as Git writes it
// (SetRevision's, else one of its own).
func revision(r *result) string {
	if r.revision != "" {
		return r.revision
	}
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
// stages.stage.results is expanded, each expanded as asked below
// stages.stage.results.result (its testResults, as Bamboo's clients ask
// for a plan's failing tests).
func stagesDoc(base string, r *result, ex expansion) doc {
	if !ex.has("stages") {
		return collapsed(1)
	}
	stage := doc{"name": "Default Stage", "state": r.state, "lifeCycleState": r.lifeCycle, "manual": false}
	jobs := r.jobs()
	if ex["stages.stage.results"] || ex.has("stages.stage.results.result") {
		items := make([]any, 0, len(jobs))
		for _, j := range jobs {
			items = append(items, jobResultDoc(base, r, j, ex.under("stages.stage.results.result")))
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
		"testResults":    testResultsDoc(r, job, ex.under("testResults")),
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

// jobNames are the demo's job names (Bamboo shows a job by its name; the
// key is in its result key).
var jobNames = map[string]string{defaultJob: "Default Job", "PKG": "Package", "IMG": "Base image"}

func jobName(job string) string {
	if n, ok := jobNames[job]; ok {
		return n
	}
	return job
}
