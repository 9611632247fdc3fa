// Package authz decides whether a principal may act on an identifier, from
// the principal and the identifiers alone, before any data is read.
//
// The rules live in two files that ops maintain: model.conf and policy.csv,
// ordinary casbin v2 files. Every route asks casbin's question
// Enforce(sub, obj, act) (docs/policy.md lists them), and the answer is
// the one stock casbin gives on the same files. For the model families ops
// use (role hierarchies, resource groups, deny rules, wildcard objects:
// model.go) the answer comes from an index built at load (index.go) that
// costs microseconds at 100,000 lines and keeps no per-caller state; any
// other valid model is decided by casbin's own Enforce (engine.go).
//
// Grades carry role rules of the service: a student views only their own
// grade and never writes; a professor asks the policy about student:S.
// A role comes from the token or from the policy (g, <sub or group:G>,
// role:<R>: roles.go).
//
// With Config.RecordUsage, every decision also counts the policy lines it
// went through (usage.go), flushed to Redis for `facade policy usage`.
//
// An Authorizer holds one immutable loaded policy behind an atomic pointer;
// Reload and Watch build a new one and swap it in, and a broken file (or
// one that shrank past the guard, reload.go) is refused while the last good
// policy stays in force.
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
	now                   func() time.Time // Config.Now
	allowShrink           atomic.Bool      // see AllowShrink
	metrics               *metrics.Metrics
	counters              map[op]opCounters
	usage                 *usageBook // nil: no usage recorded (Config.RecordUsage)

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
	Loaded       bool      // a policy is in force
	LastReloadOK bool      // the last reload attempt succeeded (or found nothing new)
	LastError    string    // generic reason of the last refusal; empty when LastReloadOK
	Version      uint64    // see Authorizer.Version
	Rules        int       // policy lines in force
	Hash         string    // content hash of the files in force (same files, same hash on every instance)
	LoadedAt     time.Time // when the policy in force was loaded
	Decider      string    // "index" (recognized model) or "casbin" (casbin's own Enforce)
}

// Config tunes an Authorizer. The zero Config works: every field
// documents what its zero value means.
type Config struct {
	// Log receives the load and reload lines; nil means slog.Default().
	Log *slog.Logger
	// Metrics records decisions and reloads; nil means a private set.
	Metrics *metrics.Metrics
	// Now is the clock load and reload times (Status.LoadedAt, the
	// facade_policy_loaded_timestamp_seconds metric, the "took" of the log
	// lines) are read from; nil means time.Now. Usage is counted by the
	// UTC day of this clock.
	Now func() time.Time
	// RecordUsage counts, per policy line, the decisions it took part in
	// (usage.go), for FlushUsage and RecordUsage to write to Redis.
	RecordUsage bool
}

// New loads and validates modelPath and policyPath, tuned by cfg. The
// error names the first problem as file:line (run Check for all of them).
func New(modelPath, policyPath string, cfg Config) (*Authorizer, error) {
	a := &Authorizer{modelPath: modelPath, policyPath: policyPath, log: cfg.Log, now: cfg.Now, metrics: cfg.Metrics}
	if a.log == nil {
		a.log = slog.Default()
	}
	if a.now == nil {
		a.now = time.Now
	}
	a.metrics = metrics.Or(a.metrics)
	a.counters = resolveCounters(a.metrics)
	started := a.now()
	st, _, err := load(modelPath, policyPath)
	if err != nil {
		return nil, err
	}
	st.version, st.loadedAt = 1, a.now()
	if cfg.RecordUsage {
		a.usage = &usageBook{}
		st.use = newLineUse(st)
	}
	a.cur.Store(st)
	a.status.Store(st.status())
	a.metrics.PolicyReloads.WithLabelValues("ok").Inc()
	a.metrics.PolicyLastReloadOK.Set(1)
	a.publish(st)
	a.log.Info("policy loaded", "model", modelPath, "policy", policyPath,
		"rules", len(st.rules), "version", st.version, "hash", st.hash, "decider", st.decider.kind(),
		"family", st.family, "took", a.now().Sub(started).Round(time.Millisecond))
	return a, nil
}

// status is the Status of st in force after a good load.
func (st *state) status() *Status {
	return &Status{Loaded: true, LastReloadOK: true, Version: st.version, Rules: len(st.rules),
		Hash: st.hash, LoadedAt: st.loadedAt, Decider: st.decider.kind()}
}

// publish sets the policy metrics to st.
func (a *Authorizer) publish(st *state) {
	a.metrics.PolicyInfo.Reset()
	a.metrics.PolicyInfo.WithLabelValues(st.hash, st.decider.kind()).Set(1)
	a.metrics.PolicyLoadedTimestamp.Set(float64(st.loadedAt.UnixNano()) / 1e9)
}

// AllowShrink lifts the reload guard that refuses an empty policy or one
// that removes more than half of the lines (FACADE_POLICY_ALLOW_SHRINK=1).
func (a *Authorizer) AllowShrink(allow bool) { a.allowShrink.Store(allow) }

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
var emptyState = &state{}

func (a *Authorizer) state() *state {
	if st := a.cur.Load(); st != nil {
		return st
	}
	return emptyState
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

// record counts one decision of o and returns it.
func (a *Authorizer) record(o op, allow bool) bool {
	c, ok := a.counters[o]
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

// Refuse writes the audit line every denial gets (principal, operation,
// target; the request id comes with ctx) and returns the one 403 all
// refusals share, so a refusal says nothing about whether the target
// exists.
func (a *Authorizer) Refuse(ctx context.Context, p facade.Principal, op, target string) error {
	a.log.LogAttrs(ctx, slog.LevelInfo, "authorization denied", slog.Bool("audit", true),
		slog.String("principal", p.ID), slog.String("role", p.Role), slog.String("op", op), slog.String("target", target))
	return facade.ErrForbidden
}

// The questions each route asks casbin (docs/policy.md). Objects are built
// here from identifiers the caller parsed (facade.AccountID, ...), whose
// format admits no prefix, separator or wildcard, so a caller never
// smuggles one into a question; they are not checked again here.

// CanViewGrade: GET a grade. A student sees their own (built in, no policy
// line); a professor asks (sub, student:S, view), which the shipped model
// answers through the student's enrollment g(student:S, class:C) and a
// grant on the class. Either role may come from the token or the policy.
func (a *Authorizer) CanViewGrade(p facade.Principal, studentID facade.StudentID) bool {
	return a.record(opViewGrade, a.state().grade(p, studentID.String(), actView))
}

// CanWriteGrade: POST or PUT a grade: a professor asking (sub, student:S,
// update); a student never, whatever the policy.
func (a *Authorizer) CanWriteGrade(p facade.Principal, studentID facade.StudentID) bool {
	return a.record(opWriteGrade, a.state().grade(p, studentID.String(), actUpdate))
}

// CanViewAccount: (sub, account:ID, view_account) (balance, record, statement).
func (a *Authorizer) CanViewAccount(p facade.Principal, accountID facade.AccountID) bool {
	return a.record(opViewAccount, a.state().account(subjectOf(p), accountID, actViewAccount))
}

// CanTransfer: (sub, account:FROM, transfer), the right to debit FROM, and
// (sub, account:TO, transfer) or (sub, account:TO, receive). receive only
// ever lets money in: it is never asked about the from account.
func (a *Authorizer) CanTransfer(p facade.Principal, from, to facade.AccountID) bool {
	st, q := a.state(), subjectOf(p)
	return a.record(opTransfer, st.account(q, from, actTransfer) &&
		(st.account(q, to, actTransfer) || st.account(q, to, actReceive)))
}

// MayDebit says whether p holds transfer on the account: asked only after
// CanTransfer refused, to tell a refused destination (check the number)
// from a refused source. Not counted: the refusal already was.
func (a *Authorizer) MayDebit(p facade.Principal, accountID facade.AccountID) bool {
	return a.state().account(subjectOf(p), accountID, actTransfer)
}

// ListAccount is CanViewAccount for building the caller's account list
// (GET /rs/account): an account left out is not a refusal, so it is
// counted apart, as ListProject's entries are.
func (a *Authorizer) ListAccount(p facade.Principal, accountID facade.AccountID) bool {
	return a.recordListed(a.state().account(subjectOf(p), accountID, actViewAccount))
}

// CanViewProject: (sub, project:K, view), i.e. the whole project. (A
// project listing also shows projects where only some plans are visible:
// see ListProject and ListPlan.)
func (a *Authorizer) CanViewProject(p facade.Principal, projectKey facade.ProjectKey) bool {
	return a.record(opViewProject, a.state().project(subjectOf(p), projectKey))
}

// CanViewPlan: (sub, plan:K-P, view) or (sub, project:K, view) (results
// and artifacts).
func (a *Authorizer) CanViewPlan(p facade.Principal, planKey facade.PlanKey) bool {
	return a.record(opViewPlan, a.state().plan(subjectOf(p), planKey))
}

// ListProject is CanViewProject for filtering a list: leaving an entry out
// of a list is not a refusal, so it is counted apart
// (facade_authz_list_entries_total) and alerts on denials stay meaningful.
func (a *Authorizer) ListProject(p facade.Principal, projectKey facade.ProjectKey) bool {
	return a.recordListed(a.state().project(subjectOf(p), projectKey))
}

// ListPlan is CanViewPlan for filtering a list (see ListProject).
func (a *Authorizer) ListPlan(p facade.Principal, planKey facade.PlanKey) bool {
	return a.recordListed(a.state().plan(subjectOf(p), planKey))
}

func (a *Authorizer) recordListed(shown bool) bool {
	if a.metrics == nil { // a zero Authorizer, which counts nothing
		return shown
	}
	if shown {
		a.metrics.ListEntries.WithLabelValues("shown").Inc()
	} else {
		a.metrics.ListEntries.WithLabelValues("hidden").Inc()
	}
	return shown
}

// account asks act on an account. The zero AccountID, which no parse
// returns, names no account: nothing is allowed on it, whatever wildcard
// the policy holds.
func (st *state) account(q subject, id facade.AccountID, act string) bool {
	return !id.IsZero() && st.enforce(q, prefixAccount+id.String(), act)
}

// project asks view on a whole project; the zero ProjectKey names none
// and is allowed nothing.
func (st *state) project(q subject, key facade.ProjectKey) bool {
	return !key.IsZero() && st.enforce(q, prefixProject+key.String(), actView)
}

// plan asks view on a plan, or on its whole project; the zero PlanKey
// names none and is allowed nothing.
func (st *state) plan(q subject, key facade.PlanKey) bool {
	if key.IsZero() {
		return false
	}
	return st.enforce(q, prefixPlan+key.String(), actView) ||
		st.enforce(q, prefixProject+key.Project().String(), actView)
}

// grade applies the role rules; act is view (GET) or update (writes). A
// role is the token's or one the policy gives (roles.go): a professor
// asks the policy about student:S; a student views their own grade, and
// being a student never lets anyone write, whatever the policy says.
// studentID is a parsed facade.StudentID's text; "" (the zero StudentID)
// names no student and is allowed nothing.
func (st *state) grade(p facade.Principal, studentID, act string) bool {
	if p.ID == "" || studentID == "" {
		return false
	}
	if act != actView && p.ID == studentID {
		// Nobody changes their own grade: a teaching assistant who is a
		// student and a professor, enrolled in a class they also teach,
		// reads their grade and never writes it.
		return false
	}
	q := subjectOf(p) // once: a token may carry 200 groups
	professor := p.HasTokenRole(facade.RoleProfessor) || st.policyRole(q, facade.RoleProfessor)
	if professor && st.enforce(q, prefixStudent+studentID, act) {
		st.usedRole(q, tokenRoleOf(p, facade.RoleProfessor), facade.RoleProfessor)
		return true
	}
	if act == actView && p.ID == studentID && (p.HasTokenRole(facade.RoleStudent) || st.policyRole(q, facade.RoleStudent)) {
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
