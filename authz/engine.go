package authz

import (
	"errors"
	"fmt"
	"strings"

	"github.com/casbin/casbin/v2"
	"github.com/casbin/casbin/v2/model"
	"github.com/casbin/casbin/v2/persist"
)

// The model this package implements. model.conf must define exactly these
// (whitespace aside): the service answers requests with indexed lookups in
// the role graphs that casbin builds from the policy, which is only correct
// if the file's matcher is this one. model.conf explains each line.
const (
	wantRequest  = "sub, obj, act"
	wantPolicy   = "sub, obj, act"
	wantGrouping = "_, _"
	wantEffect   = "some(where (p.eft == allow))"
	wantMatcher  = `g("user:" + r.sub, r.obj + " " + r.act)`
)

// state is one loaded policy: immutable once built, swapped in whole.
type state struct {
	version uint64
	digest  [32]byte
	members *graph // g: principals and groups into groups, grants into permission nodes
	enrolls *graph // g2: student:S into class:C
	rules   int    // policy lines in force (duplicates not counted)
}

// checkModel loads the model text with casbin and verifies it is the model
// above. Problems carry the line of the offending key when there is one.
func checkModel(path, text string) (model.Model, []Problem) {
	m, err := model.NewModelFromString(text)
	if err != nil {
		return nil, []Problem{{File: path, Msg: "not a valid casbin model: " + err.Error()}}
	}
	want, err := model.NewModelFromString(canonicalModel)
	if err != nil {
		panic("authz: canonical model does not load: " + err.Error())
	}
	var problems []Problem
	for _, k := range []struct{ sec, key, shows string }{
		{"r", "r", wantRequest}, {"p", "p", wantPolicy}, {"g", "g", wantGrouping},
		{"g", "g2", wantGrouping}, {"e", "e", wantEffect}, {"m", "m", wantMatcher},
	} {
		got, ok := m[k.sec][k.key]
		switch {
		case !ok:
			problems = append(problems, Problem{File: path, Msg: fmt.Sprintf("missing %s = %s (in [%s])", k.key, k.shows, sectionName(k.sec))})
		case squash(got.Value) != squash(want[k.sec][k.key].Value):
			problems = append(problems, Problem{File: path, Line: lineOfKey(text, k.key),
				Msg: fmt.Sprintf("%s must be %s: the service evaluates this model with indexed role-graph lookups (see the comments in the shipped model.conf)", k.key, k.shows)})
		}
	}
	for sec, keys := range m {
		for key := range keys {
			if _, known := want[sec][key]; !known {
				problems = append(problems, Problem{File: path, Line: lineOfKey(text, key),
					Msg: fmt.Sprintf("unexpected definition %s: policy.csv lines never load into it", key)})
			}
		}
	}
	return m, problems
}

func sectionName(sec string) string {
	return map[string]string{"r": "request_definition", "p": "policy_definition",
		"g": "role_definition", "e": "policy_effect", "m": "matchers"}[sec]
}

func squash(s string) string { return strings.Join(strings.Fields(s), "") }

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

// build turns checked model text and valid policy lines into a state, with
// casbin doing the loading: the entries go through an adapter into the model,
// and casbin's BuildRoleLinks fills the two graphs (set as g's and g2's role
// managers). The enforcer is then dropped: requests are answered from the
// graphs alone, so no per-request state (such as the memo casbin keeps
// behind g() for as long as the policy lives) can grow with callers.
func build(m model.Model, entries []entry) (*state, error) {
	e, err := casbin.NewEnforcer(m)
	if err != nil {
		return nil, err
	}
	st := &state{members: newGraph(), enrolls: newGraph(), rules: len(entries)}
	e.SetNamedRoleManager("g", st.members)
	e.SetNamedRoleManager("g2", st.enrolls)
	e.SetAdapter(&entryAdapter{entries: entries})
	if err := e.LoadPolicy(); err != nil {
		return nil, err
	}
	st.members.freeze()
	st.enrolls.freeze()
	return st, nil
}

// entryAdapter is a read-only casbin adapter over parsed policy.csv lines.
type entryAdapter struct{ entries []entry }

var errReadOnly = errors.New("authz: policy.csv is edited by ops, not through casbin")

var _ persist.Adapter = (*entryAdapter)(nil)

// LoadPolicy adds every line to m as the g or g2 rule it stands for.
func (a *entryAdapter) LoadPolicy(m model.Model) error {
	for _, e := range a.entries {
		ptype, rule := e.casbinRule()
		if err := m.AddPolicy("g", ptype, rule); err != nil {
			return err
		}
	}
	return nil
}

func (a *entryAdapter) SavePolicy(model.Model) error                { return errReadOnly }
func (a *entryAdapter) AddPolicy(string, string, []string) error    { return errReadOnly }
func (a *entryAdapter) RemovePolicy(string, string, []string) error { return errReadOnly }
func (a *entryAdapter) RemoveFilteredPolicy(string, string, int, ...string) error {
	return errReadOnly
}

// The self-test that runs at every load: casbin's own Enforce, with the
// model's matcher, must agree with the indexed decision on a fixed table, and
// both must give the expected answer. It proves the graphs casbin built are
// the ones the matcher means, whatever policy is loaded next to them.
var (
	probePolicy = []string{
		"p, probe-user, account:P1, view_account",
		"g, probe-user, team:probe",
		"g, team:probe, team:probe-outer",
		"p, team:probe-outer, project:PROBE, view",
	}
	probeCases = []struct {
		sub, obj, act string
		allow         bool
	}{
		{"probe-user", "account:P1", actViewAccount, true},
		{"probe-user", "project:PROBE", actView, true}, // through two groups
		{"probe-user", "account:P1", actTransfer, false},
		{"probe-user", "account:P2", actViewAccount, false},
		{"probe-other", "account:P1", actViewAccount, false},
		{"team:probe-outer", "project:PROBE", actView, false}, // a sub is never a group
		{"", "account:P1", actViewAccount, false},
	}
)

func selfTest(path, modelText string) []Problem {
	fail := func(msg string) []Problem {
		return []Problem{{File: path, Line: lineOfKey(modelText, "m"), Msg: "self-test: " + msg}}
	}
	var entries []entry
	for i, line := range probePolicy {
		e, msg := parseLine(line)
		if msg != "" {
			panic("authz: probe policy line invalid: " + msg)
		}
		e.line = i + 1
		entries = append(entries, e)
	}
	m, _ := model.NewModelFromString(modelText)
	e, err := casbin.NewEnforcer(m)
	if err != nil {
		return fail("casbin refused the model: " + err.Error())
	}
	st := &state{members: newGraph(), enrolls: newGraph()}
	e.SetNamedRoleManager("g", st.members)
	e.SetNamedRoleManager("g2", st.enrolls)
	e.SetAdapter(&entryAdapter{entries: entries})
	if err := e.LoadPolicy(); err != nil {
		return fail("casbin could not load the probe policy: " + err.Error())
	}
	for _, c := range probeCases {
		byCasbin, err := e.Enforce(c.sub, c.obj, c.act)
		if err != nil {
			return fail("casbin could not evaluate the matcher: " + err.Error())
		}
		byIndex := st.granted(c.sub, c.obj, c.act)
		if byCasbin != c.allow || byIndex != c.allow {
			return fail(fmt.Sprintf("(%q, %s, %s): matcher says %v, index says %v, want %v",
				c.sub, c.obj, c.act, byCasbin, byIndex, c.allow))
		}
	}
	return nil
}

// granted is the matcher g("user:" + sub, obj + " " + act) as one indexed
// walk of the members graph.
func (st *state) granted(sub, obj, act string) bool {
	if sub == "" {
		return false
	}
	return st.members.reaches(prefixUser+sub, permNode(obj, act))
}
