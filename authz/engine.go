package authz

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/casbin/casbin/v2"
	"github.com/casbin/casbin/v2/model"
	"github.com/casbin/casbin/v2/persist"
	"github.com/casbin/casbin/v2/util"
)

// decider answers casbin's Enforce(sub, obj, act) for one loaded policy.
type decider interface {
	enforce(sub, obj, act string) bool
	kind() string // "index" or "casbin": which path decides (policy check, /readyz, metric)
}

// Decider names.
const (
	deciderIndex  = "index"
	deciderCasbin = "casbin"
)

// state is one loaded policy: immutable once built, swapped in whole.
type state struct {
	version  uint64
	hash     string   // hex SHA-256 (first 8 bytes) of model.conf and policy.csv contents
	digest   [32]byte // the whole SHA-256: "nothing changed" is one compare
	loadedAt time.Time
	decider  decider
	family   string // the recognized family, or why casbin decides
	model    model.Model
	rules    []rule // as casbin loads them (duplicates skipped), file order
	classes  classIndex
}

// compile checks the files and builds the decider: the index for a
// recognized model, casbin's own enforcer for any other valid one.
func compile(f files) (*state, []Problem) {
	m, rules, problems := f.check()
	if HasErrors(problems) {
		return nil, problems
	}
	st := &state{hash: f.hash(), digest: f.digest, model: m, rules: rules}
	if s, reason := recognize(m); s != nil {
		st.decider, st.family = newIndex(s, rules), s.String()
		return st, problems
	} else {
		st.family = reason
	}
	d, err := newCasbinDecider(m, rules)
	if err != nil {
		return nil, append(problems, Problem{File: f.policyPath, Msg: "casbin could not load the policy: " + err.Error()})
	}
	st.decider = d
	return st, problems
}

func (st *state) digestOf() [32]byte { return st.digest }

// enforce asks the policy in force; a nil decider (zero Authorizer) denies.
func (st *state) enforce(sub, obj, act string) bool {
	return st.decider != nil && st.decider.enforce(sub, obj, act)
}

// checkModel loads the model text with casbin.
func checkModel(path, text string) (model.Model, []Problem) {
	m, err := model.NewModelFromString(text)
	if err != nil {
		return nil, []Problem{{File: path, Msg: "not a valid casbin model: " + err.Error()}}
	}
	return m, nil
}

// checkPatterns refuses wildcard objects casbin's function would fail on
// (keyMatch2 compiles a regular expression, globMatch parses a glob): casbin
// would answer those questions with an error, the service with a deny.
func checkPatterns(path string, m model.Model, rules []rule) []Problem {
	s, _ := recognize(m)
	if s == nil || s.objMatch == "" || s.objMatch == "keyMatch" {
		return nil
	}
	var problems []Problem
	for _, r := range rules {
		if r.ptype != "p" {
			continue
		}
		if err := patternError(s.objMatch, r.fields[1]); err != "" {
			problems = append(problems, Problem{File: path, Line: r.line, Msg: fmt.Sprintf("object %q is not a valid %s pattern: %s", r.fields[1], s.objMatch, err)})
		}
	}
	return problems
}

func patternError(fn, pattern string) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg = "casbin fails on it"
		}
	}()
	switch fn {
	case "keyMatch2":
		util.KeyMatch2("", pattern)
	case "globMatch":
		if _, err := util.GlobMatch("", pattern); err != nil {
			return "casbin fails on it"
		}
	}
	return ""
}

// casbinDecider is the slow path: casbin's own Enforce, for models outside
// the recognized families (ABAC conditions, domains, priorities...). Cost
// grows with the number of p rows (see the README's policy section).
type casbinDecider struct {
	mu    sync.RWMutex // Enforce under RLock; forget under Lock
	e     *casbin.Enforcer
	roles []string
	calls atomic.Uint64
}

// forgetEvery bounds the memo casbin keeps behind g(): it lives as long as
// the compiled matcher, so callers asking many distinct questions would
// grow the heap without limit. Re-setting the role managers drops it.
const forgetEvery = 4096

func newCasbinDecider(m model.Model, rules []rule) (*casbinDecider, error) {
	e, err := casbin.NewEnforcer(m)
	if err != nil {
		return nil, err
	}
	e.EnableLog(false)
	e.SetAdapter(&rulesAdapter{rules: rules})
	if err := e.LoadPolicy(); err != nil {
		return nil, err
	}
	d := &casbinDecider{e: e}
	for k := range m["g"] {
		d.roles = append(d.roles, k)
	}
	return d, nil
}

func (d *casbinDecider) enforce(sub, obj, act string) bool {
	if d.calls.Add(1)%forgetEvery == 0 {
		d.forget()
	}
	d.mu.RLock()
	defer d.mu.RUnlock()
	ok, err := d.e.Enforce(sub, obj, act) // errors (and casbin's recovered panics) deny
	return err == nil && ok
}

func (d *casbinDecider) forget() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, g := range d.roles {
		d.e.SetNamedRoleManager(g, d.e.GetNamedRoleManager(g))
	}
}

func (d *casbinDecider) kind() string { return deciderCasbin }

// explain is casbin's EnforceEx: the decision and the row it names.
func (d *casbinDecider) explain(sub, obj, act string) (bool, []string, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.e.EnforceEx(sub, obj, act)
}

// rulesAdapter is a read-only casbin adapter over parsed policy.csv rules.
type rulesAdapter struct{ rules []rule }

var errReadOnly = errors.New("authz: policy.csv is edited by ops, not through casbin")

var _ persist.Adapter = (*rulesAdapter)(nil)

func (a *rulesAdapter) LoadPolicy(m model.Model) error {
	for _, r := range a.rules {
		if err := persist.LoadPolicyArray(append([]string{r.ptype}, r.fields...), m); err != nil {
			return err
		}
	}
	return nil
}

func (a *rulesAdapter) SavePolicy(model.Model) error                { return errReadOnly }
func (a *rulesAdapter) AddPolicy(string, string, []string) error    { return errReadOnly }
func (a *rulesAdapter) RemovePolicy(string, string, []string) error { return errReadOnly }
func (a *rulesAdapter) RemoveFilteredPolicy(string, string, int, ...string) error {
	return errReadOnly
}

func sectionName(sec string) string {
	return map[string]string{"r": "request_definition", "p": "policy_definition",
		"g": "role_definition", "e": "policy_effect", "m": "matchers"}[sec]
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
