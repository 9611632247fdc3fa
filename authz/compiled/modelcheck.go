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

// brokenMatcher refuses matchers on which casbin's Enforce fails for
// every question the service asks (loaded, every decision would be a
// silent deny: an outage): a function casbin does not define, a matcher it
// cannot parse, and an attribute of a request value (r.obj.Owner), which
// is a string here.
func brokenMatcher(path, text string, m model.Model) []Problem {
	warn := func(format string, args ...any) []Problem {
		return []Problem{{File: path, Line: lineOfKey(text, "m"), Msg: fmt.Sprintf(format, args...)}}
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

// CheckModel loads the model text with casbin and refuses what the service
// cannot ask of it and a matcher casbin would fail on (modelcheck.go).
func CheckModel(path, text string) (model.Model, []Problem) {
	m, err := model.NewModelFromString(text)
	if err != nil {
		return nil, []Problem{{File: path, Msg: "not a valid casbin model: " + err.Error()}}
	}
	problems := unsupportedModel(path, text, m)
	if HasErrors(problems) {
		return nil, problems
	}
	if broken := brokenMatcher(path, text, m); len(broken) > 0 {
		return nil, append(problems, broken...)
	}
	return m, problems
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

// probeSubject is the principal of FirstQuestion's question: no token's
// sub (it has a colon), so it holds nothing.
const probeSubject = "facade:first-question"

// FirstQuestion asks p one question as the service asks them, on the
// decider that will answer them, and refuses the model at its matcher line
// (modelPath, modelText) when casbin fails on it: a matcher casbin parses
// but cannot evaluate on strings (a comparison of a string with a number,
// a function given the wrong arguments) would deny every question. The
// index decides only matchers it has parsed and evaluates, so only
// casbin's own Enforce is asked.
func FirstQuestion(modelPath, modelText string, p *Policy) []Problem {
	d, ok := p.d.(*casbinDecider)
	if !ok {
		return nil
	}
	if _, _, err := d.ask(Subject{ID: probeSubject}, probeSubject, "view", false); err != nil {
		msg := err.Error()
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i] // a recovered panic carries its stack
		}
		return []Problem{{File: modelPath, Line: lineOfKey(modelText, "m"),
			Msg: "casbin fails on the first question it is asked (" + msg + "): every question would be denied"}}
	}
	return nil
}
