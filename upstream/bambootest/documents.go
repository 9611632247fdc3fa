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
