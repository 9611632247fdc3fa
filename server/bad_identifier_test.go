package server_test

import (
	"net/http"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// identifierSamples holds, per path parameter of api/openapi.json that is
// an identifier, a well-formed value and a malformed one (an encoded "/"
// inside the value, or what the parameter's own format refuses).
var identifierSamples = map[string]struct{ good, bad string }{
	"studentId":    {"alice", "al%2Fice"},
	"classId":      {"english-101", "english%2F101"},
	"accountId":    {"1001", "10%2F01"},
	"from":         {"1001", "10%2F01"},
	"to":           {"2002", "20 02"},
	"projectKey":   {"PROJ", "proj"},
	"planKey":      {"PROJ-PLAN", "PROJ%2FPLAN"},
	"key":          {"PROJ", "PROJ-PLAN-x"},
	"resultKey":    {"PROJ-PLAN-12", "PROJ-PLAN"},
	"buildNumber":  {"12", "twelve"},
	"artifactPath": {"JOB/report.txt", "JOB/a%23b"},
	"downloadPath": {"PROJ-PLAN/report.txt", "PROJ-PLAN/a%23b"},
}

// notIdentifiers are path parameters with their own refusals: an amount
// (bad-amount, amount_test), a page's file and a problem's code (404).
var notIdentifiers = map[string]bool{"amount": true, "file": true, "code": true}

var docParamName = regexp.MustCompile(`\{([^}]+)\}`)

// A malformed identifier is refused with 400 bad-identifier whose errors
// item names the very parameter api/openapi.json gives that segment, on
// every documented path, one parameter at a time: a client (or a person
// reading the body) learns which part of the path to fix. The other
// parameters of the same path are well-formed, so the item can only come
// from the one that is not.
func TestBadIdentifierNamesItsParameter(t *testing.T) {
	doc, err := openAPI()
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, withBuilds())
	admin := token(t, "alice", "developer")
	paths := doc.doc.Paths.Map()
	names := make([]string, 0, len(paths))
	for p := range paths {
		names = append(names, p)
	}
	sort.Strings(names)
	checked := map[string]bool{}
	for _, path := range names {
		item := paths[path]
		method := http.MethodGet
		switch {
		case item.Get != nil:
		case item.Post != nil:
			method = http.MethodPost
		default:
			continue // Bamboo's write routes: 405 whatever the path holds
		}
		params := docParamName.FindAllStringSubmatch(path, -1)
		for _, target := range params {
			name := target[1]
			if notIdentifiers[name] {
				continue
			}
			if _, ok := identifierSamples[name]; !ok {
				t.Errorf("%s: no sample for path parameter %q; add one to identifierSamples", path, name)
				continue
			}
			url := docParamName.ReplaceAllStringFunc(path, func(m string) string {
				n := m[1 : len(m)-1]
				switch {
				case n == name:
					return identifierSamples[n].bad
				case n == "amount":
					return "1.00"
				}
				return identifierSamples[n].good
			})
			r := e.do(req{method: method, path: url, token: admin, body: "{}", header: map[string]string{
				"Content-Type": "application/json", "Idempotency-Key": "k-" + name}})
			p := decodeProblem(t, r)
			if r.status != 400 || p.Code != "bad-identifier" || len(p.Errors) != 1 ||
				p.Errors[0].Parameter != name || p.Errors[0].Code != "malformed" || p.Errors[0].Detail == "" {
				t.Errorf("%s %s: %d %s %+v; want 400 bad-identifier with one errors item for %q", method, url, r.status, p.Code, p.Errors, name)
			}
			checked[name] = true
		}
	}
	for name := range identifierSamples {
		if !checked[name] {
			t.Errorf("sample for %q never used: api/openapi.json names no such path parameter", name)
		}
	}
	if !strings.Contains(e.do(req{method: "GET", path: "/problems/bad-identifier"}).body, "path segment") {
		t.Error("/problems/bad-identifier does not describe the malformed rule")
	}
}
