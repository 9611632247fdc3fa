package compiled

import (
	"errors"
	"sync"
	"sync/atomic"

	"github.com/casbin/casbin/v2"
	"github.com/casbin/casbin/v2/model"
	"github.com/casbin/casbin/v2/persist"
)

// casbinDecider is the slow path: casbin's own Enforce, for models outside
// the recognized families (ABAC conditions, domains, priorities...). Cost
// grows with the number of p rows (see docs/policy.md).
type casbinDecider struct {
	mu       sync.RWMutex // Enforce under RLock; forget, and questions with token groups, under Lock
	e        *casbin.Enforcer
	roles    []string
	calls    atomic.Uint64
	hasGroup bool // the model defines GroupRole, where token groups go
	rebuild  bool // token groups were added and removed since the last forget
	rules    []Rule
}

// forgetEvery bounds the memo casbin keeps behind g(): it lives as long as
// the compiled matcher, so callers asking many distinct questions would
// grow the heap without limit. Re-setting the role managers drops it.
const forgetEvery = 4096

func newCasbinDecider(m model.Model, rules []Rule) (*casbinDecider, error) {
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
		d.hasGroup = d.hasGroup || k == GroupRole
	}
	return d, nil
}

func (d *casbinDecider) enforce(q Subject, obj, act string) bool {
	ok, _, err := d.ask(q, obj, act, false)
	return err == nil && ok // errors (and casbin's recovered panics) deny
}

// enforceUsed asks EnforceEx, which names the deciding p row, and counts
// it and the g lines on the way in u; without u it is enforce.
func (d *casbinDecider) enforceUsed(q Subject, obj, act string, u *Uses) bool {
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
func (d *casbinDecider) ask(q Subject, obj, act string, explain bool) (bool, []string, error) {
	if d.calls.Add(1)%forgetEvery == 0 {
		d.forget()
	}
	enforce := func() (bool, []string, error) {
		if explain {
			return d.e.EnforceEx(q.ID, obj, act)
		}
		ok, err := d.e.Enforce(q.ID, obj, act)
		return ok, nil, err
	}
	if len(q.Groups) == 0 || !d.hasGroup {
		d.mu.RLock()
		defer d.mu.RUnlock()
		return enforce()
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	var added [][]string
	for _, rule := range q.memberships() {
		if ok, err := d.e.AddNamedGroupingPolicy(GroupRole, rule); err != nil {
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
		d.e.RemoveNamedGroupingPolicy(GroupRole, r) //nolint:errcheck // a rule just added is there to remove
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

func (d *casbinDecider) kind() string { return DeciderCasbin }

// explain is casbin's EnforceEx: the decision and the row it names.
func (d *casbinDecider) explain(q Subject, obj, act string) (bool, []string, error) {
	return d.ask(q, obj, act, true)
}

// rulesAdapter is a read-only casbin adapter over parsed policy.csv rules.
type rulesAdapter struct{ rules []Rule }

var errReadOnly = errors.New("authz: policy.csv is edited by ops, not through casbin")

var _ persist.Adapter = (*rulesAdapter)(nil)

func (a *rulesAdapter) LoadPolicy(m model.Model) error {
	for _, r := range a.rules {
		if err := persist.LoadPolicyArray(append([]string{r.Type}, r.Fields...), m); err != nil {
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
