package authz

import (
	"github.com/prometheus/client_golang/prometheus"

	facade "github.com/facade-dev/facade"
	"github.com/facade-dev/facade/authz/compiled"
	"github.com/facade-dev/facade/metrics"
)

// The questions each route asks casbin (docs/policy.md). Objects are built
// here from identifiers the caller parsed (facade.AccountID, ...), whose
// format admits no prefix, separator or wildcard, so a caller never
// smuggles one into a question; they are not checked again here.

// CanViewGrade: GET a grade. A student sees their own (built in, no policy
// line); a professor asks (sub, student:S, view), which the shipped model
// answers through the student's enrollment g(student:S, class:C) and a
// grant on the class. Either role may come from the token or the policy.
func (a *Authorizer) CanViewGrade(p facade.Principal, studentID facade.StudentID) bool {
	return a.count.record(opViewGrade, a.force.state().grade(p, studentID.String(), ActView))
}

// CanWriteGrade: POST or PUT a grade: a professor asking (sub, student:S,
// update); a student never, whatever the policy.
func (a *Authorizer) CanWriteGrade(p facade.Principal, studentID facade.StudentID) bool {
	return a.count.record(opWriteGrade, a.force.state().grade(p, studentID.String(), ActUpdate))
}

// CanViewAccount: (sub, account:ID, view_account) (balance, record, statement).
func (a *Authorizer) CanViewAccount(p facade.Principal, accountID facade.AccountID) bool {
	return a.count.record(opViewAccount, a.force.state().account(compiled.SubjectOf(p), accountID, ActViewAccount))
}

// CanTransfer: (sub, account:FROM, transfer), the right to debit FROM, and
// (sub, account:TO, transfer) or (sub, account:TO, receive). receive only
// ever lets money in: it is never asked about the from account.
func (a *Authorizer) CanTransfer(p facade.Principal, from, to facade.AccountID) bool {
	st, q := a.force.state(), compiled.SubjectOf(p)
	return a.count.record(opTransfer, st.account(q, from, ActTransfer) &&
		(st.account(q, to, ActTransfer) || st.account(q, to, ActReceive)))
}

// MayDebit says whether p holds transfer on the account: asked only after
// CanTransfer refused, to tell a refused destination (check the number)
// from a refused source. Not counted: the refusal already was.
func (a *Authorizer) MayDebit(p facade.Principal, accountID facade.AccountID) bool {
	return a.force.state().account(compiled.SubjectOf(p), accountID, ActTransfer)
}

// ListAccount is CanViewAccount for building the caller's account list
// (GET /rs/account): an account left out is not a refusal, so it is
// counted apart, as ListProject's entries are.
func (a *Authorizer) ListAccount(p facade.Principal, accountID facade.AccountID) bool {
	return a.count.listed(a.force.state().account(compiled.SubjectOf(p), accountID, ActViewAccount))
}

// CanViewProject: (sub, project:K, view), i.e. the whole project. (A
// project listing also shows projects where only some plans are visible:
// see ListProject and ListPlan.)
func (a *Authorizer) CanViewProject(p facade.Principal, projectKey facade.ProjectKey) bool {
	return a.count.record(opViewProject, a.force.state().project(compiled.SubjectOf(p), projectKey))
}

// CanViewPlan: (sub, plan:K-P, view) or (sub, project:K, view) (results
// and artifacts).
func (a *Authorizer) CanViewPlan(p facade.Principal, planKey facade.PlanKey) bool {
	return a.count.record(opViewPlan, a.force.state().plan(compiled.SubjectOf(p), planKey))
}

// ListProject is CanViewProject for filtering a list: leaving an entry out
// of a list is not a refusal, so it is counted apart
// (facade_authz_list_entries_total) and alerts on denials stay meaningful.
func (a *Authorizer) ListProject(p facade.Principal, projectKey facade.ProjectKey) bool {
	return a.count.listed(a.force.state().project(compiled.SubjectOf(p), projectKey))
}

// ListPlan is CanViewPlan for filtering a list (see ListProject).
func (a *Authorizer) ListPlan(p facade.Principal, planKey facade.PlanKey) bool {
	return a.count.listed(a.force.state().plan(compiled.SubjectOf(p), planKey))
}

// enforce asks the policy, counting the lines used when usage is recorded
// (st.use); the empty Loaded of a zero Authorizer denies.
func (st *Loaded) enforce(q compiled.Subject, obj, act string) bool {
	return st.pol.EnforceCounted(q, obj, act, st.use)
}

// usedRole credits the g lines that gave p role when the policy, not the
// token, gave it (the grade rules read it).
func (st *Loaded) usedRole(q compiled.Subject, tokenRole, role string) {
	if st.use == nil || tokenRole == role {
		return
	}
	from := ""
	if _, ok := st.roles[q.ID][role]; ok {
		from = q.ID
	} else {
		for _, g := range q.Groups {
			if d, ok := st.roles[g][role]; ok && d+1 <= compiled.MaxDepth {
				from = g
				break
			}
		}
	}
	if from != "" {
		st.use.CreditLinks(from, PrefixRole+role)
	}
}

// account asks act on an account. The zero AccountID, which no parse
// returns, names no account: nothing is allowed on it, whatever wildcard
// the policy holds.
func (st *Loaded) account(q compiled.Subject, id facade.AccountID, act string) bool {
	return !id.IsZero() && st.enforce(q, PrefixAccount+id.String(), act)
}

// project asks view on a whole project; the zero ProjectKey names none
// and is allowed nothing.
func (st *Loaded) project(q compiled.Subject, key facade.ProjectKey) bool {
	return !key.IsZero() && st.enforce(q, PrefixProject+key.String(), ActView)
}

// plan asks view on a plan, or on its whole project; the zero PlanKey
// names none and is allowed nothing.
func (st *Loaded) plan(q compiled.Subject, key facade.PlanKey) bool {
	if key.IsZero() {
		return false
	}
	return st.enforce(q, PrefixPlan+key.String(), ActView) ||
		st.enforce(q, PrefixProject+key.Project().String(), ActView)
}

// grade applies the role rules; act is view (GET) or update (writes). A
// role is the token's or one the policy gives (roles.go): a professor
// asks the policy about student:S; a student views their own grade, and
// being a student never lets anyone write, whatever the policy says.
// studentID is a parsed facade.StudentID's text; "" (the zero StudentID)
// names no student and is allowed nothing.
func (st *Loaded) grade(p facade.Principal, studentID, act string) bool {
	if p.ID == "" || studentID == "" {
		return false
	}
	if act != ActView && p.ID == studentID {
		// Nobody changes their own grade: a teaching assistant who is a
		// student and a professor, enrolled in a class they also teach,
		// reads their grade and never writes it.
		return false
	}
	q := compiled.SubjectOf(p) // once: a token may carry 200 groups
	professor := p.HasTokenRole(facade.RoleProfessor) || st.policyRole(q, facade.RoleProfessor)
	if professor && st.enforce(q, PrefixStudent+studentID, act) {
		st.usedRole(q, tokenRoleOf(p, facade.RoleProfessor), facade.RoleProfessor)
		return true
	}
	if act == ActView && p.ID == studentID && (p.HasTokenRole(facade.RoleStudent) || st.policyRole(q, facade.RoleStudent)) {
		st.usedRole(q, tokenRoleOf(p, facade.RoleStudent), facade.RoleStudent)
		return true
	}
	return false
}

// tokenRoleOf is role when p's token gives it (usedRole then counts no
// policy line for it), else "".
func tokenRoleOf(p facade.Principal, role string) string {
	if p.HasTokenRole(role) {
		return role
	}
	return ""
}

// op names an authorization operation: the op label of the decision
// metric.
type op string

func newOp(name string) op { ops = append(ops, op(name)); return op(name) }

// ops lists every operation, so an Authorizer resolves the counters of
// each once.
var ops []op

type opCounters struct{ allow, deny prometheus.Counter }

func resolveCounters(m *metrics.Metrics) map[op]opCounters {
	out := make(map[op]opCounters, len(ops))
	for _, o := range ops {
		out[o] = opCounters{m.Decisions.WithLabelValues(string(o), "allow"), m.Decisions.WithLabelValues(string(o), "deny")}
	}
	return out
}

var (
	opViewGrade   = newOp("view_grade")
	opWriteGrade  = newOp("write_grade")
	opViewAccount = newOp("view_account")
	opTransfer    = newOp("transfer")
	opViewProject = newOp("view_project")
	opViewPlan    = newOp("view_plan")
)

// decisionCounts are an Authorizer's decision metrics, resolved once.
type decisionCounts struct {
	m   *metrics.Metrics
	ops map[op]opCounters
}

// record counts one decision of o and returns it.
func (d *decisionCounts) record(o op, allow bool) bool {
	c, ok := d.ops[o]
	if !ok { // a zero Authorizer, which counts nothing
		return allow
	}
	if allow {
		c.allow.Inc()
	} else {
		c.deny.Inc()
	}
	return allow
}

// listed counts one entry of a list, shown or left out, and returns it.
func (d *decisionCounts) listed(shown bool) bool {
	if d.m == nil { // a zero Authorizer, which counts nothing
		return shown
	}
	if shown {
		d.m.ListEntries.WithLabelValues("shown").Inc()
	} else {
		d.m.ListEntries.WithLabelValues("hidden").Inc()
	}
	return shown
}
