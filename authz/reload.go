package authz

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/redis/go-redis/v9"
)

const (
	defaultDebounce  = 200 * time.Millisecond
	defaultPollEvery = 30 * time.Second
)

// Generic reasons for Status.LastError (no paths, no file contents).
const (
	reasonUnreadable = "policy files could not be read; the previous policy stays in force"
	reasonInvalid    = "policy files are invalid; the previous policy stays in force"
	reasonShrunk     = "the new policy is empty or removes more than half of the lines; the previous policy stays in force"
)

// Reload re-reads both files. A new policy is built completely and then
// swapped in, so a decision sees the old policy or the new one, never a mix.
// On any problem the policy in force stays, the refusal is logged and
// counted, Status reports it, and the error (file:line, for logs and ops,
// never for clients) is returned. Unchanged files are a successful no-op.
func (a *Authorizer) Reload() error {
	_, err := a.reload()
	return err
}

// reload reports whether a different policy is now in force.
func (a *Authorizer) reload() (changed bool, err error) {
	a.reloadMu.Lock()
	defer a.reloadMu.Unlock()
	started := a.now()
	f, err := readFiles(a.modelPath, a.policyPath)
	if err != nil {
		return false, a.refuse("read:"+err.Error(), reasonUnreadable, err)
	}
	cur := a.state()
	if f.digest == cur.digestOf() {
		a.accept(cur, started, false)
		return false, nil
	}
	st, problems := compile(f)
	if st == nil {
		return false, a.refuse(f.hash(), reasonInvalid, firstError(problems))
	}
	if msg := a.shrunk(cur, st); msg != "" {
		return false, a.refuse(f.hash(), reasonShrunk, fmt.Errorf("authz: %s: %s; set FACADE_POLICY_ALLOW_SHRINK=1 to accept it", a.policyPath, msg))
	}
	st.version, st.loadedAt, st.digest = cur.version+1, a.now(), f.digest
	if a.usage != nil {
		st.use = newLineUse(st)
		a.usage.retire(cur)
	}
	a.cur.Store(st)
	a.accept(st, started, true)
	return true, nil
}

// shrunk says why next must not replace cur: an empty policy, or one that
// removes more than half of the lines in force, is far more often a
// truncated copy or a bad merge than an intent.
func (a *Authorizer) shrunk(cur, next *state) string {
	if a.allowShrink.Load() || cur == emptyState {
		return ""
	}
	before, after := len(cur.rules), len(next.rules)
	switch {
	case after == 0 && before > 0:
		return "the new policy has no lines"
	case after*2 < before:
		return fmt.Sprintf("the new policy removes %d of %d lines (more than half)", before-after, before)
	}
	return ""
}

// accept records that st is in force; fresh means it was just swapped in.
func (a *Authorizer) accept(st *state, started time.Time, fresh bool) {
	wasRefusing := !a.Status().LastReloadOK
	a.refusedKey = ""
	a.status.Store(st.status())
	a.metrics.PolicyLastReloadOK.Set(1)
	switch {
	case fresh:
		a.publish(st)
		a.metrics.PolicyReloads.WithLabelValues("ok").Inc()
		a.log.Info("policy reloaded", "rules", len(st.rules), "version", st.version, "hash", st.hash,
			"decider", st.decider.kind(), "took", a.now().Sub(started).Round(time.Millisecond))
	case wasRefusing:
		a.metrics.PolicyReloads.WithLabelValues("ok").Inc()
		a.log.Info("policy files are back to the policy in force", "version", st.version)
	}
}

// refuse keeps the policy in force and reports why, once per distinct
// failure (key), so a file that stays broken is not re-logged on every poll.
func (a *Authorizer) refuse(key, reason string, err error) error {
	a.metrics.PolicyLastReloadOK.Set(0)
	if key == a.refusedKey {
		return err
	}
	a.refusedKey = key
	cur := a.state()
	refused := Status{LastError: reason}
	if cur != emptyState {
		refused = *cur.status()
		refused.LastReloadOK, refused.LastError = false, reason
	}
	a.status.Store(&refused)
	a.metrics.PolicyReloads.WithLabelValues("error").Inc()
	a.log.Error("policy reload refused; previous policy stays in force",
		"err", err, "version", cur.version)
	return err
}

// Watch reloads the policy whenever it may have changed, until ctx ends:
//
//   - fsnotify on the directories holding the two files (editors and config
//     managers replace a file by renaming another over it, which a watch on
//     the file itself would miss);
//   - rdb Pub/Sub (when rdb is not nil): an instance that notices a change
//     itself tells the others, which then re-read their own files (for
//     volumes that do not deliver inotify events, such as NFS);
//   - a re-read every 30 s as a safety net for missed events.
//
// Bursts are debounced. Unchanged files cost a read and a hash. Watch
// returns nil when ctx ends, an error only when watching cannot start.
func (a *Authorizer) Watch(ctx context.Context, rdb redis.UniversalClient) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("authz: watch policy files: %w", err)
	}
	defer w.Close()
	paths, err := a.watchDirs(w)
	if err != nil {
		return err
	}
	var remote <-chan *redis.Message
	if rdb != nil {
		sub := rdb.Subscribe(ctx, reloadChannel)
		defer sub.Close()
		remote = sub.Channel()
	}
	poll := time.NewTicker(orDefault(a.pollEvery, defaultPollEvery))
	defer poll.Stop()
	settle := time.NewTimer(0) // a first check catches edits made since New
	localChange := true
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev := <-w.Events:
			if touches(ev, paths) {
				localChange = true
				settle.Reset(orDefault(a.debounce, defaultDebounce))
			}
		case err := <-w.Errors:
			a.log.Warn("policy file watch error", "err", err)
		case <-remote:
			settle.Reset(orDefault(a.debounce, defaultDebounce))
		case <-poll.C:
			localChange = true
			settle.Reset(0)
		case <-settle.C:
			changed, _ := a.reload() // refusals are logged by reload
			if changed && localChange && rdb != nil {
				a.announce(ctx, rdb)
			}
			localChange = false
		}
	}
}

// watchDirs watches the directories of both files and returns the cleaned
// absolute file paths that matter.
func (a *Authorizer) watchDirs(w *fsnotify.Watcher) (map[string]bool, error) {
	paths := map[string]bool{}
	dirs := map[string]bool{}
	for _, p := range []string{a.modelPath, a.policyPath} {
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, fmt.Errorf("authz: watch policy files: %w", err)
		}
		paths[abs] = true
		if dir := filepath.Dir(abs); !dirs[dir] {
			if err := w.Add(dir); err != nil {
				return nil, fmt.Errorf("authz: watch %s: %w", dir, err)
			}
			dirs[dir] = true
		}
	}
	return paths, nil
}

// touches reports whether ev may have changed one of paths: the file itself,
// or a "..name" entry of the kind Kubernetes swaps to update mounted files.
func touches(ev fsnotify.Event, paths map[string]bool) bool {
	name := filepath.Clean(ev.Name)
	if paths[name] {
		return true
	}
	if !strings.HasPrefix(filepath.Base(name), "..") {
		return false
	}
	for p := range paths {
		if filepath.Dir(p) == filepath.Dir(name) {
			return true
		}
	}
	return false
}

// announce tells the other instances to reload. A failure is only logged:
// they also poll their files.
func (a *Authorizer) announce(ctx context.Context, rdb redis.UniversalClient) {
	st := a.state()
	msg := fmt.Sprintf("version=%d hash=%s", st.version, st.hash)
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second) // a down Redis must not stall the watch loop
	defer cancel()
	if err := rdb.Publish(ctx, reloadChannel, msg).Err(); err != nil {
		a.log.Warn("could not announce the policy reload to other instances", "err", err)
	}
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}
