package bambootest

import (
	"bytes"
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
	d := doc{
		"expand": "plans",
		"key":    p.key,
		"name":   p.name,
		"link":   link(base + "/rest/api/latest/project/" + p.key),
		"plans":  collapsed(len(p.plans)),
	}
	if p.description != "" {
		d["description"] = p.description
	}
	if withPlans {
		plans := make([]any, 0, len(p.plans))
		for _, pl := range p.plans {
			plans = append(plans, fullPlanDoc(base, pl))
		}
		d["plans"] = doc{"size": len(plans), "expand": "plan", "start-index": 0, "max-result": len(plans), "plan": plans}
	}
	return d
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

// fullPlanDoc is the plan object of plan lists.
func fullPlanDoc(base string, p *plan) doc {
	d := planDoc(base, p)
	maps.Copy(d, doc{
		"expand":                    "actions,stages,branches,variableContext",
		"projectKey":                p.project.key,
		"projectName":               p.project.name,
		"isFavourite":               false,
		"isActive":                  false,
		"isBuilding":                false,
		"averageBuildTimeInSeconds": 46,
		"actions":                   collapsed(3),
		"stages":                    collapsed(1),
		"branches":                  collapsed(0),
	})
	return d
}

// Fixed clock of the generated history: build N started N×3h after it.
var epoch = time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)

func (r *result) started() time.Time { return epoch.Add(time.Duration(r.number) * 3 * time.Hour) }
func (r *result) duration() time.Duration {
	return time.Duration(30+(r.number*37)%300)*time.Second + time.Duration(r.number%1000)*time.Millisecond
}
func (r *result) completed() time.Time { return r.started().Add(r.duration()) }

func resultDoc(base string, r *result, withArtifacts bool) doc {
	const stamp, pretty = "2006-01-02T15:04:05.000-07:00", "Mon, 2 Jan, 03:04 PM"
	passed, failed := 20+r.number%10, 0
	summary := strconv.Itoa(passed) + " passed"
	if r.state == "Failed" {
		failed = 1 + r.number%3
		summary = fmt.Sprintf("%d of %d failed", failed, passed+failed)
	}
	reason := `Changes by <a href="` + base + `/browse/user/developer">Developer</a>`
	return doc{
		"expand":                   "plan,vcsRevisions,artifacts,comments,labels,jiraIssues,stages",
		"link":                     link(base + "/rest/api/latest/result/" + r.key()),
		"plan":                     planDoc(base, r.plan),
		"planName":                 r.plan.name,
		"projectName":              r.plan.project.name,
		"buildResultKey":           r.key(),
		"lifeCycleState":           "Finished",
		"id":                       r.id,
		"buildStartedTime":         r.started().Format(stamp),
		"prettyBuildStartedTime":   r.started().Format(pretty),
		"buildCompletedTime":       r.completed().Format(stamp),
		"buildCompletedDate":       r.completed().Format(stamp),
		"prettyBuildCompletedTime": r.completed().Format(pretty),
		"buildDurationInSeconds":   int(r.duration().Seconds()),
		"buildDuration":            r.duration().Milliseconds(),
		"buildDurationDescription": fmt.Sprintf("%d seconds", int(r.duration().Seconds())),
		"vcsRevisionKey":           fmt.Sprintf("%040x", r.id*2654435761),
		"vcsRevisions":             collapsed(1),
		"buildTestSummary":         summary,
		"successfulTestCount":      passed,
		"failedTestCount":          failed,
		"buildReason":              reason,
		"reasonSummary":            reason,
		"artifacts":                artifactsDoc(base, r, withArtifacts),
		"comments":                 collapsed(0),
		"labels":                   collapsed(0),
		"jiraIssues":               collapsed(0),
		"stages":                   collapsed(1),
		"key":                      r.key(),
		"planResultKey":            doc{"key": r.key(), "entityKey": doc{"key": r.plan.key()}, "resultNumber": r.number},
		"state":                    r.state,
		"buildState":               r.state,
		"number":                   r.number,
		"buildNumber":              r.number,
	}
}

func artifactsDoc(base string, r *result, expand bool) doc {
	d := collapsed(len(r.artifacts))
	if expand {
		items := make([]any, 0, len(r.artifacts))
		for _, a := range r.artifacts {
			items = append(items, artifactDoc(base, r, a))
		}
		d["artifact"] = items
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
