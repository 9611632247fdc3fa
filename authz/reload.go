package authz

import (
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/facade-dev/facade/authz/grantusage"
	"github.com/facade-dev/facade/metrics"
)

// inForce is the policy in force and how it is replaced: loaded once
// (load), re-read on Reload and by Watch (watch.go), a new Loaded swapped
// in whole. Decisions read it without waiting: an atomic pointer.
type inForce struct {
	modelPath, policyPath string
	log                   *slog.Logger
	now                   func() time.Time // Config.Now
	metrics               *metrics.Metrics
	usage                 *grantusage.Book // nil: no usage recorded; else a reload retires the old counts here
	allowShrink           atomic.Bool      // see Authorizer.AllowShrink

	cur    atomic.Pointer[Loaded]
	status atomic.Pointer[Status]

	reloadMu   sync.Mutex // one reload at a time; decisions never wait for it
	refusedKey string     // what the last refused reload read, so it is reported once

	instance string // this instance's name in instancesKey (shared.go)
	differ   bool   // the live instances ran different policies at the last beat (watch loop only)

	// Watch's timing; zero means the defaults (tests shorten or lengthen them).
	debounce  time.Duration
	pollEvery time.Duration
	beatEvery time.Duration
}

// emptyState is what a zero Authorizer decides with: nothing is granted.
var emptyState = &Loaded{}

// state is the policy in force (emptyState before any).
func (f *inForce) state() *Loaded {
	if st := f.cur.Load(); st != nil {
		return st
	}
	return emptyState
}

// load reads, checks and compiles the files the first time, for New.
func (f *inForce) load() error {
	started := f.now()
	st, _, err := Load(f.modelPath, f.policyPath)
	if err != nil {
		return err
	}
	st.version, st.loadedAt = 1, f.now()
	if f.usage != nil {
		st.use = st.pol.NewUses()
	}
	f.cur.Store(st)
	f.status.Store(st.status())
	f.metrics.PolicyReloads.WithLabelValues("ok").Inc()
	f.metrics.PolicyLastReloadOK.Set(1)
	f.publish(st)
	f.log.Info("policy loaded", "model", f.modelPath, "policy", f.policyPath,
		"rules", len(st.pol.Rules), "version", st.version, "hash", st.hash, "decider", st.pol.Decider(),
		"family", st.pol.Family, "took", f.now().Sub(started).Round(time.Millisecond))
	return nil
}

// status is the Status of st in force after a good load.
func (st *Loaded) status() *Status {
	return &Status{Loaded: true, LastReloadOK: true, Version: st.version, Rules: len(st.pol.Rules),
		Hash: st.hash, LoadedAt: st.loadedAt, Decider: st.pol.Decider()}
}

// publish sets the policy metrics to st.
func (f *inForce) publish(st *Loaded) {
	f.metrics.PolicyInfo.Reset()
	f.metrics.PolicyInfo.WithLabelValues(st.hash, st.pol.Decider()).Set(1)
	f.metrics.PolicyLoadedTimestamp.Set(float64(st.loadedAt.UnixNano()) / 1e9)
}

// Generic reasons for Status.LastError (no paths, no file contents).
const (
	reasonUnreadable = "policy files could not be read; the previous policy stays in force"
	reasonInvalid    = "policy files are invalid; the previous policy stays in force"
	reasonShrunk     = "the new policy is empty or removes more than half of the lines; the previous policy stays in force"
)

// reload reports whether a different policy is now in force.
func (f *inForce) reload() (changed bool, err error) {
	f.reloadMu.Lock()
	defer f.reloadMu.Unlock()
	started := f.now()
	read, err := readFiles(f.modelPath, f.policyPath)
	if err != nil {
		return false, f.refuse("read:"+err.Error(), reasonUnreadable, err)
	}
	cur := f.state()
	if read.digest == cur.digest {
		f.accept(cur, started, false)
		return false, nil
	}
	st, problems := compile(read)
	if st == nil {
		return false, f.refuse(read.hash(), reasonInvalid, firstError(problems))
	}
	if msg := f.shrunk(cur, st); msg != "" {
		return false, f.refuse(read.hash(), reasonShrunk, fmt.Errorf("authz: %s: %s; set FACADE_POLICY_ALLOW_SHRINK=1 to accept it", f.policyPath, msg))
	}
	st.version, st.loadedAt, st.digest = cur.version+1, f.now(), read.digest
	if f.usage != nil {
		st.use = st.pol.NewUses()
		if cur.use != nil {
			f.usage.Retire(cur.use)
		}
	}
	f.cur.Store(st)
	f.accept(st, started, true)
	return true, nil
}

// shrunk says why next must not replace cur: an empty policy, or one that
// removes more than half of the lines in force, is far more often a
// truncated copy or a bad merge than an intent.
func (f *inForce) shrunk(cur, next *Loaded) string {
	if f.allowShrink.Load() || cur == emptyState {
		return ""
	}
	return shrinkage(len(cur.pol.Rules), len(next.pol.Rules))
}

// shrinkage says why a policy of after lines must not follow one of
// before: empty, or more than half of the lines gone ("" when it may).
func shrinkage(before, after int) string {
	switch {
	case after == 0 && before > 0:
		return "the new policy has no lines"
	case after*2 < before:
		return fmt.Sprintf("the new policy removes %d of %d lines (more than half)", before-after, before)
	}
	return ""
}

// accept records that st is in force; fresh means it was just swapped in.
func (f *inForce) accept(st *Loaded, started time.Time, fresh bool) {
	s := f.status.Load()
	wasRefusing := s == nil || !s.LastReloadOK
	f.refusedKey = ""
	f.status.Store(st.status())
	f.metrics.PolicyLastReloadOK.Set(1)
	switch {
	case fresh:
		f.publish(st)
		f.metrics.PolicyReloads.WithLabelValues("ok").Inc()
		f.log.Info("policy reloaded", "rules", len(st.pol.Rules), "version", st.version, "hash", st.hash,
			"decider", st.pol.Decider(), "took", f.now().Sub(started).Round(time.Millisecond))
	case wasRefusing:
		f.metrics.PolicyReloads.WithLabelValues("ok").Inc()
		f.log.Info("policy files are back to the policy in force", "version", st.version)
	}
}

// refuse keeps the policy in force and reports why, once per distinct
// failure (key), so a file that stays broken is not re-logged on every poll.
func (f *inForce) refuse(key, reason string, err error) error {
	f.metrics.PolicyLastReloadOK.Set(0)
	if key == f.refusedKey {
		return err
	}
	f.refusedKey = key
	cur := f.state()
	refused := Status{LastError: reason}
	if cur != emptyState {
		refused = *cur.status()
		refused.LastReloadOK, refused.LastError = false, reason
	}
	f.status.Store(&refused)
	f.metrics.PolicyReloads.WithLabelValues("error").Inc()
	f.log.Error("policy reload refused; previous policy stays in force",
		"err", err, "version", cur.version)
	return err
}
