package compiled

import (
	"fmt"
	"slices"
	"strings"

	"github.com/casbin/casbin/v2/model"
	"github.com/casbin/govaluate"
)

// unsupportedModel refuses, at the line that defines them, models whose
// questions the service cannot ask: it asks every question as casbin's
// Enforce(sub, obj, act), three strings, with no domain, type or time.
func unsupportedModel(path, text string, m model.Model) []Problem {
	var problems []Problem
	if r := m["r"]["r"]; r != nil && !slices.Equal(r.Tokens, []string{"r_sub", "r_obj", "r_act"}) {
		problems = append(problems, Problem{File: path, Line: lineOfKey(text, "r"),
			Msg: fmt.Sprintf("request_definition r = %s: the service asks every question as Enforce(sub, obj, act), so the model must say r = sub, obj, act", r.Value)})
	}
	for _, key := range sortedStrings(keysOf(m["g"])) {
		g := m["g"][key]
		switch {
		case len(g.ParamsTokens) > 0:
			problems = append(problems, Problem{File: path, Line: lineOfKey(text, key),
				Msg: fmt.Sprintf("role definition %s = %s is time-bounded (casbin's conditional roles): the service supports role links without time bounds only, %s = _, _", key, g.Value, key)})
		case len(g.Tokens) != 2:
			problems = append(problems, Problem{File: path, Line: lineOfKey(text, key),
				Msg: fmt.Sprintf("role definition %s = %s links roles within a domain or of a type (a third field): the service's questions carry no domain, so %s must be _, _", key, g.Value, key)})
		}
	}
	return problems
}

func keysOf(a model.AssertionMap) []string {
	var keys []string
	for k := range a {
		keys = append(keys, k)
	}
	return keys
}

// matcherWarnings reports matchers on which casbin's Enforce fails for
// every question the service asks (then every decision is a silent deny):
// a function casbin does not define, a matcher it cannot parse, and an
// attribute of a request value (r.obj.Owner), which is a string here.
func matcherWarnings(path, text string, m model.Model) []Problem {
	warn := func(format string, args ...any) []Problem {
		return []Problem{{File: path, Line: lineOfKey(text, "m"), Warning: true, Msg: fmt.Sprintf(format, args...)}}
	}
	tokens, err := lexMatcher(m)
	if err != nil {
		if name, ok := strings.CutPrefix(err.Error(), "Undefined function "); ok {
			return warn("the matcher calls %s, which casbin does not define: casbin fails on every question, so every question is denied", name)
		}
		return warn("casbin cannot parse the matcher (%s): casbin fails on every question, so every question is denied", err)
	}
	for _, t := range tokens {
		if t.Kind != govaluate.ACCESSOR {
			continue
		}
		if parts, _ := t.Value.([]string); len(parts) > 1 && strings.HasPrefix(parts[0], "r_") {
			return warn("the matcher reads %s.%s, an attribute of a request value, but the service's requests are strings: casbin fails on such questions, so they are denied",
				strings.Replace(parts[0], "_", ".", 1), strings.Join(parts[1:], "."))
		}
	}
	return nil
}

// CheckModel loads the model text with casbin, refuses what the service
// cannot ask of it and warns of what casbin would fail on (modelcheck.go).
func CheckModel(path, text string) (model.Model, []Problem) {
	m, err := model.NewModelFromString(text)
	if err != nil {
		return nil, []Problem{{File: path, Msg: "not a valid casbin model: " + err.Error()}}
	}
	problems := unsupportedModel(path, text, m)
	if HasErrors(problems) {
		return nil, problems
	}
	return m, append(problems, matcherWarnings(path, text, m)...)
}

// CheckPatterns refuses, for a model the index decides, wildcard objects
// casbin's matching function fails on (keyMatch2, keyMatch3 and
// regexMatch compile a regular expression, globMatch parses a glob):
// casbin would answer every question reaching such a line with an error,
// the service with a deny.
func CheckPatterns(path string, m model.Model, rules []Rule) []Problem {
	s, _ := recognize(m)
	if s == nil || s.objMatch == "" {
		return nil
	}
	var problems []Problem
	for _, r := range rules {
		if r.Type != "p" {
			continue
		}
		if _, err := compilePattern(s.objMatch, r.Fields[1]); err != nil {
			problems = append(problems, Problem{File: path, Line: r.Line, Msg: fmt.Sprintf("object %q is not a valid %s pattern: casbin fails on it", r.Fields[1], s.objMatch)})
		}
	}
	return problems
}

// lineOfKey returns the 1-based line where "key =" is defined, or 0.
func lineOfKey(text, key string) int {
	for i, line := range strings.Split(text, "\n") {
		k, _, ok := strings.Cut(line, "=")
		if ok && strings.TrimSpace(k) == key {
			return i + 1
		}
	}
	return 0
}
