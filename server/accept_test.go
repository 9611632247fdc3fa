package server

import (
	"mime"
	"strconv"
	"strings"
	"testing"
)

// TestAcceptChoosesAsBefore: which answer each Accept header gets, as
// clients see it (JSON or 406, CSV, a browser's page), for the headers
// browsers, curl, spreadsheets and careful clients send and for the edges
// of RFC 9110's rules.
func TestAcceptChoosesAsBefore(t *testing.T) {
	const browser = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
	for _, tc := range []struct {
		name            string
		values          []string // nil: no Accept header
		json, csv, html bool
	}{
		{name: "no header", values: nil, json: true},
		{name: "an empty header", values: []string{""}, json: true},
		{name: "a blank header", values: []string{"  "}, json: true},
		{name: "curl", values: []string{"*/*"}, json: true},
		{name: "a JSON client", values: []string{"application/json"}, json: true},
		{name: "a problem client", values: []string{"application/problem+json"}, json: true},
		{name: "upper case", values: []string{"Application/JSON"}, json: true},
		{name: "application/*", values: []string{"application/*"}, json: true},
		{name: "a browser", values: []string{browser}, json: true, html: true},
		{name: "JSON refused, anything else welcome", values: []string{"application/json;q=0, */*"}},
		{name: "JSON refused whatever the order", values: []string{"*/*, application/json;q=0"}},
		{name: "application/* refused, JSON welcome", values: []string{"application/*;q=0, application/json"}, json: true},
		{name: "the best q of equally specific ranges", values: []string{"application/json;q=0, application/problem+json;q=0.5"}, json: true},
		{name: "JSON at any q above 0", values: []string{"application/json;q=0.001"}, json: true},
		{name: "only XML", values: []string{"application/xml"}},
		{name: "only an unparsable range", values: []string{"not a type"}},
		{name: "only a comma", values: []string{","}},
		{name: "a q that is not a number is not sent", values: []string{"application/json;q=high, */*;q=0"}},
		{name: "a spreadsheet", values: []string{"text/csv"}, csv: true},
		{name: "CSV among others", values: []string{"application/json, text/csv;q=0.5"}, json: true, csv: true},
		{name: "CSV refused", values: []string{"text/csv;q=0"}},
		{name: "CSV refused, then asked", values: []string{"text/csv;q=0, text/csv"}, csv: true},
		{name: "text/* names no CSV and no page", values: []string{"text/*"}},
		{name: "two header lines", values: []string{"text/csv", "application/json;q=0"}, csv: true},
		{name: "HTML refused", values: []string{"text/html;q=0, */*"}, json: true},
		{name: "a parameter is not a type", values: []string{`application/json; profile="text/html"`}, json: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := parseAccept(tc.values)
			if got := a.admitsJSON(); got != tc.json {
				t.Errorf("admitsJSON = %v, want %v", got, tc.json)
			}
			if got := a.asksFor("text/csv"); got != tc.csv {
				t.Errorf("asksFor(text/csv) = %v, want %v", got, tc.csv)
			}
			if got := a.asksFor("text/html"); got != tc.html {
				t.Errorf("asksFor(text/html) = %v, want %v", got, tc.html)
			}
		})
	}
}

// FuzzAcceptAgreesWithTheFormerParsers: for any Accept header, the one
// reading answers as the separate parsers it replaced did (kept below,
// as they were, for this comparison): the same 406s, CSVs and pages.
func FuzzAcceptAgreesWithTheFormerParsers(f *testing.F) {
	for _, s := range []string{"", "*/*", "application/json;q=0, */*", "text/csv;q=0.5", "text/csv;q=0, text/html;q=0", "text/html,*/*;q=0.8",
		"application/*;q=NaN, application/json", "application/json;q=1e-400", "a/b;q=0;q=1", "text/csv;Q=+Inf"} {
		f.Add(s, "")
	}
	f.Fuzz(func(t *testing.T, v1, v2 string) {
		for _, values := range [][]string{{v1}, {v1, v2}} {
			a := parseAccept(values)
			if got, want := a.admitsJSON(), formerAcceptsJSON(values); got != want {
				t.Fatalf("%q: admitsJSON %v, before %v", values, got, want)
			}
			for _, mt := range []string{"text/csv", "text/html"} {
				if got, want := a.asksFor(mt), formerWants(values, mt); got != want {
					t.Fatalf("%q: asksFor(%s) %v, before %v", values, mt, got, want)
				}
			}
		}
	})
}

// formerAcceptsJSON is the JSON routes' Accept check as it was (one of
// the parsers the one reading replaced), kept as the fuzz target's oracle.
func formerAcceptsJSON(values []string) bool {
	best, bestQ := 0, 1.0
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			part = strings.TrimSpace(part)
			if part == "" {
				continue
			}
			mt, params, err := mime.ParseMediaType(part)
			if err != nil {
				continue
			}
			spec := map[string]int{"application/json": 3, "application/problem+json": 3, "application/*": 2, "*/*": 1}[mt]
			if spec == 0 || spec < best {
				continue
			}
			q := 1.0
			if qs, ok := params["q"]; ok {
				if q, err = strconv.ParseFloat(qs, 64); err != nil {
					continue
				}
			}
			if spec > best || q > bestQ {
				best, bestQ = spec, q
			}
		}
	}
	if best == 0 {
		for _, v := range values {
			if strings.TrimSpace(v) != "" {
				return false
			}
		}
		return true
	}
	return bestQ > 0
}

// formerWants is wantsCSV and wantsHTML as they were: some range is
// exactly mt with no q or a q above 0.
func formerWants(values []string, mt string) bool {
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			got, params, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil || got != mt {
				continue
			}
			q, ok := params["q"]
			if !ok {
				return true
			}
			if f, err := strconv.ParseFloat(q, 64); err == nil && f > 0 {
				return true
			}
		}
	}
	return false
}
