// Package authz decides whether a principal may act on an identifier, from
// the principal and the identifiers alone, before any data is read: the
// Authorizer is what the server and the proxy ask. It exists so that every
// route asks one question in one place, and so that ops change who may do
// what by editing two files, never the code.
//
// The rules live in two files that ops maintain: model.conf and policy.csv,
// ordinary casbin v2 files. Every route asks casbin's question
// Enforce(sub, obj, act) (docs/policy.md lists them, questions.go asks
// them), and the answer is the one stock casbin gives on the same files:
// package compiled reads and compiles them. This package adds what is the
// service's own: the vocabulary a line may use (vocabulary.go, lint.go),
// the grade rules (a student views only their own grade and never writes;
// a professor asks the policy about student:S), the roles a policy gives
// (g, <sub or group:G>, role:<R>: roles.go), the class lists and the
// page's holdings.
//
// With Config.RecordUsage, every decision also counts the policy lines it
// went through, which package grantusage writes to Redis for `facade
// policy usage` (usage.go).
//
// An Authorizer holds one immutable Loaded policy behind an atomic pointer;
// Reload and Watch build a new one and swap it in, and a broken file (or
// one that shrank past the guard, reload.go) is refused while the last good
// policy stays in force.
package authz

import (
	"context"
	"log/slog"
	"time"

	facade "github.com/facade-dev/facade"
	"github.com/facade-dev/facade/authz/grantusage"
	"github.com/facade-dev/facade/metrics"
)

// Authorizer answers authorization questions against the policy in force.
// It is safe for concurrent use. The zero value denies everything; use New.
type Authorizer struct {
	force   inForce // the policy in force, reloaded and watched (reload.go, watch.go)
	log     *slog.Logger
	metrics *metrics.Metrics
	count   decisionCounts
	usage   *grantusage.Book // nil: no usage recorded (Config.RecordUsage)
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
	a := &Authorizer{log: cfg.Log, metrics: metrics.Or(cfg.Metrics)}
	if a.log == nil {
		a.log = slog.Default()
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	a.count = decisionCounts{m: a.metrics, ops: resolveCounters(a.metrics)}
	if cfg.RecordUsage {
		a.usage = grantusage.NewBook(now, a.log, a.metrics)
	}
	a.force = inForce{modelPath: modelPath, policyPath: policyPath, log: a.log, now: now, metrics: a.metrics, usage: a.usage, instance: newInstanceID()}
	if err := a.force.load(); err != nil {
		return nil, err
	}
	return a, nil
}

// AllowShrink lifts the reload guard that refuses an empty policy or one
// that removes more than half of the lines (FACADE_POLICY_ALLOW_SHRINK=1).
func (a *Authorizer) AllowShrink(allow bool) { a.force.allowShrink.Store(allow) }

// Version identifies the policy in force; it changes on every reload that
// brings in a different policy (not when the files are unchanged). Callers
// key per-principal caches on it.
func (a *Authorizer) Version() uint64 { return a.force.state().version }

// Status reports the policy's health.
func (a *Authorizer) Status() Status {
	if s := a.force.status.Load(); s != nil {
		return *s
	}
	return Status{}
}

// Reload re-reads both files. A new policy is built completely and then
// swapped in, so a decision sees the old policy or the new one, never a mix.
// On any problem the policy in force stays, the refusal is logged and
// counted, Status reports it, and the error (file:line, for logs and ops,
// never for clients) is returned. Unchanged files are a successful no-op.
func (a *Authorizer) Reload() error {
	_, err := a.force.reload()
	return err
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
