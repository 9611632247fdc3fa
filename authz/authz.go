// Package authz decides whether a principal may act on an identifier (SPEC
// section 3), from the principal and the identifiers alone, before any data
// is read.
//
// The rules live in two files that ops maintain: model.conf (a casbin v2
// model) and policy.csv ("p, sub, obj, act" grants and "g, a, b" groupings).
// Casbin loads them; policy lines are fed to it as links in two role graphs
// (g: memberships and grants, g2: enrollments) whose role manager is the
// indexed graph in graph.go, so a decision is a walk over the groups the
// principal is in, never a scan of the grants. model.conf documents the
// mapping line by line.
//
// Grades carry built-in role rules: a student views only their own grade and
// never writes; a professor acts on a student enrolled in a class on which
// the professor (or one of their groups) holds view (GET) or update (writes).
//
// An Authorizer holds one immutable loaded policy behind an atomic pointer;
// Reload and Watch build a new one and swap it in, and a broken file is
// refused while the last good policy stays in force.
package authz

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	facade "github.com/facade-dev/facade"
	"github.com/facade-dev/facade/metrics"
)

// Authorizer answers authorization questions against the policy in force.
// It is safe for concurrent use. The zero value denies everything; use New.
type Authorizer struct {
	modelPath, policyPath string
	log                   *slog.Logger

	cur    atomic.Pointer[state]
	status atomic.Pointer[Status]

	reloadMu   sync.Mutex // one reload at a time; decisions never wait for it
	refusedKey string     // what the last refused reload read, so it is reported once

	// Watch's timing; zero means the defaults (tests shorten or lengthen them).
	debounce  time.Duration
	pollEvery time.Duration
}

// Status is the policy's health, for /readyz and logs.
type Status struct {
	Loaded       bool   // a policy is in force
	LastReloadOK bool   // the last reload attempt succeeded (or found nothing new)
	LastError    string // generic reason of the last refusal; empty when LastReloadOK
	Version      uint64 // see Authorizer.Version
	Rules        int    // policy lines in force
}

// New loads and validates modelPath and policyPath. The error names the
// first problem as file:line (run Check for all of them).
func New(modelPath, policyPath string, logger *slog.Logger) (*Authorizer, error) {
	if logger == nil {
		logger = slog.Default()
	}
	a := &Authorizer{modelPath: modelPath, policyPath: policyPath, log: logger}
	started := time.Now()
	f, err := readFiles(modelPath, policyPath)
	if err != nil {
		return nil, err
	}
	st, err := compile(f)
	if err != nil {
		return nil, err
	}
	st.version = 1
	a.cur.Store(st)
	a.status.Store(&Status{Loaded: true, LastReloadOK: true, Version: 1, Rules: st.rules})
	metrics.PolicyReloads.WithLabelValues("ok").Inc()
	metrics.PolicyLastReloadOK.Set(1)
	logger.Info("policy loaded", "model", modelPath, "policy", policyPath,
		"rules", st.rules, "version", st.version, "took", time.Since(started).Round(time.Millisecond))
	return a, nil
}

// Version identifies the policy in force; it changes on every reload that
// brings in a different policy (not when the files are unchanged). Callers
// key per-principal caches on it.
func (a *Authorizer) Version() uint64 { return a.state().version }

// Status reports the policy's health.
func (a *Authorizer) Status() Status {
	if s := a.status.Load(); s != nil {
		return *s
	}
	return Status{}
}

// emptyState is what a zero Authorizer decides with: nothing is granted.
var emptyState = func() *state {
	st := &state{members: newGraph(), enrolls: newGraph()}
	st.members.freeze()
	st.enrolls.freeze()
	return st
}()

func (a *Authorizer) state() *state {
	if st := a.cur.Load(); st != nil {
		return st
	}
	return emptyState
}

// Decision counters, resolved once: a label lookup per decision would cost
// more than the decision.
type op struct{ allow, deny prometheus.Counter }

func newOp(name string) op {
	return op{metrics.Decisions.WithLabelValues(name, "allow"), metrics.Decisions.WithLabelValues(name, "deny")}
}

var (
	opViewGrade   = newOp("view_grade")
	opWriteGrade  = newOp("write_grade")
	opViewAccount = newOp("view_account")
	opTransfer    = newOp("transfer")
	opViewProject = newOp("view_project")
	opViewPlan    = newOp("view_plan")
)

func (o op) record(allow bool) bool {
	if allow {
		o.allow.Inc()
	} else {
		o.deny.Inc()
	}
	return allow
}

// Refuse writes the audit line every denial gets (principal, operation,
// target; the request id comes with ctx) and returns the one 403 all
// refusals share, so a refusal says nothing about whether the target
// exists.
func (a *Authorizer) Refuse(ctx context.Context, p facade.Principal, op, target string) error {
	a.log.LogAttrs(ctx, slog.LevelInfo, "authorization denied", slog.Bool("audit", true),
		slog.String("principal", p.ID), slog.String("role", p.Role), slog.String("op", op), slog.String("target", target))
	return facade.Errorf(facade.EFORBIDDEN, facade.DetailForbidden)
}

// CanViewGrade: GET a grade. A student sees their own; a professor sees a
// student enrolled in a class they (or a group of theirs) hold view on.
func (a *Authorizer) CanViewGrade(p facade.Principal, studentID string) bool {
	return opViewGrade.record(a.state().grade(p, studentID, actView))
}

// CanWriteGrade: POST or PUT a grade. Only a professor holding update on a
// class the student is enrolled in; a student never, whatever the policy.
func (a *Authorizer) CanWriteGrade(p facade.Principal, studentID string) bool {
	return opWriteGrade.record(a.state().grade(p, studentID, actUpdate))
}

// CanViewAccount: view_account on account:ID (balance, record, statement).
func (a *Authorizer) CanViewAccount(p facade.Principal, accountID string) bool {
	return opViewAccount.record(facade.ValidID(accountID) &&
		a.state().granted(p.ID, prefixAccount+accountID, actViewAccount))
}

// CanTransfer: transfer on the from account and on the to account.
func (a *Authorizer) CanTransfer(p facade.Principal, from, to string) bool {
	st := a.state()
	return opTransfer.record(facade.ValidID(from) && facade.ValidID(to) &&
		st.granted(p.ID, prefixAccount+from, actTransfer) &&
		st.granted(p.ID, prefixAccount+to, actTransfer))
}

// CanViewProject: view on project:K, i.e. on the whole project. (A project
// listing also shows projects where only some plans are visible: ask
// CanViewPlan for those.)
func (a *Authorizer) CanViewProject(p facade.Principal, projectKey string) bool {
	return opViewProject.record(facade.ValidProjectKey(projectKey) &&
		a.state().granted(p.ID, prefixProject+projectKey, actView))
}

// CanViewPlan: view on plan:K-P or on project:K (results and artifacts).
func (a *Authorizer) CanViewPlan(p facade.Principal, projectKey, planKey string) bool {
	return opViewPlan.record(a.state().planVisible(p.ID, projectKey, planKey))
}

// grade applies the built-in grade rules; act is view (GET) or update (writes).
func (st *state) grade(p facade.Principal, studentID, act string) bool {
	if p.ID == "" || !facade.ValidID(studentID) {
		return false
	}
	switch p.Role {
	case facade.RoleStudent:
		return act == actView && p.ID == studentID
	case facade.RoleProfessor:
		_, ok := st.teachingClass(p.ID, studentID, act)
		return ok
	}
	return false
}

// teachingClass returns the first class (in policy order) the student is
// enrolled in on which sub holds act, in one walk of sub's groups.
func (st *state) teachingClass(sub, studentID, act string) (string, bool) {
	user := prefixUser + sub
	if !st.members.has(user) {
		return "", false // a principal the policy never names: deny before any work
	}
	classes := st.enrolls.direct(prefixStudent + studentID)
	if len(classes) == 0 {
		return "", false
	}
	targets := make([]string, len(classes))
	for i, c := range classes {
		targets[i] = permNode(c, act)
	}
	i, ok := st.members.reachAny(user, targets)
	if !ok {
		return "", false
	}
	return classes[i], true
}

func (st *state) planVisible(sub, projectKey, planKey string) bool {
	if sub == "" || !facade.ValidProjectKey(projectKey) || !facade.ValidPlanKey(planKey) {
		return false
	}
	_, ok := st.members.reachAny(prefixUser+sub, []string{
		permNode(prefixPlan+projectKey+"-"+planKey, actView),
		permNode(prefixProject+projectKey, actView),
	})
	return ok
}

// firstError formats the first refusing problem for an error message.
func firstError(problems []Problem) error {
	var first *Problem
	n := 0
	for i := range problems {
		if !problems[i].Warning {
			if first == nil {
				first = &problems[i]
			}
			n++
		}
	}
	if n == 1 {
		return fmt.Errorf("authz: %s", first)
	}
	return fmt.Errorf("authz: %s (and %d more problems; run `facade policy check`)", first, n-1)
}
