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
)

// decider answers casbin's Enforce(sub, obj, act) for one loaded policy.
type decider interface {
	enforce(q subject, obj, act string) bool
	// enforceUsed is enforce, counting the lines the decision used in u
	// (usage.go); nil counts nothing.
	enforceUsed(q subject, obj, act string, u *lineUse) bool
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
	roles    roleIndex // the roles the policy gives (roles.go)
	grants   grants    // Holdings', built on first use
	use      *lineUse  // usage counts; nil when the Authorizer records none
}

// compile checks the files and builds the decider: the index for a
// recognized model, casbin's own enforcer for any other valid one.
func compile(f files) (*state, []Problem) {
	m, rules, problems := f.check()
	if HasErrors(problems) {
		return nil, problems
	}
	st := &state{hash: f.hash(), digest: f.digest, model: m, rules: rules}
	if _, ok := m["g"][groupRole]; ok {
		st.roles = newRoleIndex(rules)
	}
	if s, reason := recognize(m); s != nil {
		x, err := newIndex(s, rules)
		if err != nil {
			return nil, append(problems, Problem{File: f.policyPath, Msg: err.Error()})
		}
		st.decider, st.family = x, s.String()
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
func (st *state) enforce(q subject, obj, act string) bool {
	if st.decider == nil {
		return false
	}
	// One path with usage recorded or not (st.use nil): the two differ by
	// the counting alone.
	return st.decider.enforceUsed(q, obj, act, st.use)
}

// checkModel loads the model text with casbin, refuses what the service
// cannot ask of it and warns of what casbin would fail on (modelcheck.go).
func checkModel(path, text string) (model.Model, []Problem) {
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

// checkPatterns refuses, for a model the index decides, wildcard objects
// casbin's matching function fails on (keyMatch2, keyMatch3 and
// regexMatch compile a regular expression, globMatch parses a glob):
// casbin would answer every question reaching such a line with an error,
// the service with a deny.
func checkPatterns(path string, m model.Model, rules []rule) []Problem {
	s, _ := recognize(m)
	if s == nil || s.objMatch == "" {
		return nil
	}
	var problems []Problem
	for _, r := range rules {
		if r.ptype != "p" {
			continue
		}
		if _, err := compilePattern(s.objMatch, r.fields[1]); err != nil {
			problems = append(problems, Problem{File: path, Line: r.line, Msg: fmt.Sprintf("object %q is not a valid %s pattern: casbin fails on it", r.fields[1], s.objMatch)})
		}
	}
	return problems
}

// casbinDecider is the slow path: casbin's own Enforce, for models outside
// the recognized families (ABAC conditions, domains, priorities...). Cost
// grows with the number of p rows (see docs/policy.md).
type casbinDecider struct {
	mu       sync.RWMutex // Enforce under RLock; forget, and questions with token groups, under Lock
	e        *casbin.Enforcer
	roles    []string
	calls    atomic.Uint64
	hasGroup bool // the model defines groupRole, where token groups go
	rebuild  bool // token groups were added and removed since the last forget
	rules    []rule
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
	e.EnableAutoSave(false) // token groups are added for one question, never saved
	e.SetAdapter(&rulesAdapter{rules: rules})
	if err := e.LoadPolicy(); err != nil {
		return nil, err
	}
	d := &casbinDecider{e: e, rules: rules}
	for k := range m["g"] {
		d.roles = append(d.roles, k)
		d.hasGroup = d.hasGroup || k == groupRole
	}
	return d, nil
}

func (d *casbinDecider) enforce(q subject, obj, act string) bool {
	ok, _, err := d.ask(q, obj, act, false)
	return err == nil && ok // errors (and casbin's recovered panics) deny
}

// enforceUsed asks EnforceEx, which names the deciding p row, and counts
// it and the g lines on the way in u; without u it is enforce.
func (d *casbinDecider) enforceUsed(q subject, obj, act string, u *lineUse) bool {
	if u == nil {
		return d.enforce(q, obj, act)
	}
	ok, row, err := d.ask(q, obj, act, true)
	if err != nil {
		return false
	}
	d.creditCasbin(u, d.rules, q, obj, ok, row)
	return ok
}

// ask is casbin's Enforce (or EnforceEx, with explain) on the policy with
// q's token groups as g lines: added for this question under the write
// lock, then removed (the ones the policy did not already have).
func (d *casbinDecider) ask(q subject, obj, act string, explain bool) (bool, []string, error) {
	if d.calls.Add(1)%forgetEvery == 0 {
		d.forget()
	}
	enforce := func() (bool, []string, error) {
		if explain {
			return d.e.EnforceEx(q.id, obj, act)
		}
		ok, err := d.e.Enforce(q.id, obj, act)
		return ok, nil, err
	}
	if len(q.groups) == 0 || !d.hasGroup {
		d.mu.RLock()
		defer d.mu.RUnlock()
		return enforce()
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	var added [][]string
	for _, rule := range q.memberships() {
		if ok, err := d.e.AddNamedGroupingPolicy(groupRole, rule); err != nil {
			d.removeGroups(added)
			return false, nil, err
		} else if ok {
			added = append(added, rule)
		}
	}
	defer d.removeGroups(added)
	return enforce()
}

func (d *casbinDecider) removeGroups(rules [][]string) {
	for _, r := range rules {
		d.e.RemoveNamedGroupingPolicy(groupRole, r) //nolint:errcheck // a rule just added is there to remove
	}
	d.rebuild = d.rebuild || len(rules) > 0
}

// forget drops casbin's g() memo and, after token groups came and went,
// the roles casbin's role manager created for them (it keeps every name it
// ever saw).
func (d *casbinDecider) forget() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.rebuild {
		d.rebuild = false
		if err := d.e.BuildRoleLinks(); err == nil {
			return
		}
	}
	for _, g := range d.roles {
		d.e.SetNamedRoleManager(g, d.e.GetNamedRoleManager(g))
	}
}

func (d *casbinDecider) kind() string { return deciderCasbin }

// explain is casbin's EnforceEx: the decision and the row it names.
func (d *casbinDecider) explain(q subject, obj, act string) (bool, []string, error) {
	return d.ask(q, obj, act, true)
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
