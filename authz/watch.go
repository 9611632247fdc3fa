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

// reloadChannel carries "the policy files changed, reload yours" between
// instances (Pub/Sub; the payload is informative only): the Redis channel
// this package owns.
const reloadChannel = "facade:authz:reload"

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
	return a.force.watch(ctx, rdb)
}

// watch is Watch.
func (f *inForce) watch(ctx context.Context, rdb redis.UniversalClient) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("authz: watch policy files: %w", err)
	}
	defer w.Close()
	paths, err := f.watchDirs(w)
	if err != nil {
		return err
	}
	var remote <-chan *redis.Message
	if rdb != nil {
		sub := rdb.Subscribe(ctx, reloadChannel)
		defer sub.Close()
		remote = sub.Channel()
	}
	poll := time.NewTicker(orDefault(f.pollEvery, defaultPollEvery))
	defer poll.Stop()
	var beat <-chan time.Time // which policy this instance runs (shared.go)
	if rdb != nil {
		t := time.NewTicker(orDefault(f.beatEvery, beatEvery))
		defer t.Stop()
		beat = t.C
		f.beat(ctx, rdb)
	}
	settle := time.NewTimer(0) // a first check catches edits made since New
	localChange := true
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev := <-w.Events:
			if touches(ev, paths) {
				localChange = true
				settle.Reset(orDefault(f.debounce, defaultDebounce))
			}
		case err := <-w.Errors:
			f.log.Warn("policy file watch error", "err", err)
		case <-remote:
			settle.Reset(orDefault(f.debounce, defaultDebounce))
		case <-poll.C:
			localChange = true
			settle.Reset(0)
		case <-settle.C:
			changed, _ := f.reload() // refusals are logged by reload
			if changed && rdb != nil {
				f.recordShared(ctx, rdb, f.state())
				if localChange {
					f.announce(ctx, rdb)
				}
				f.beat(ctx, rdb)
			}
			localChange = false
		case <-beat:
			f.beat(ctx, rdb)
		}
	}
}

// watchDirs watches the directories of both files and returns the cleaned
// absolute file paths that matter.
func (f *inForce) watchDirs(w *fsnotify.Watcher) (map[string]bool, error) {
	paths := map[string]bool{}
	dirs := map[string]bool{}
	for _, p := range []string{f.modelPath, f.policyPath} {
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
func (f *inForce) announce(ctx context.Context, rdb redis.UniversalClient) {
	st := f.state()
	msg := fmt.Sprintf("version=%d hash=%s", st.version, st.hash)
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second) // a down Redis must not stall the watch loop
	defer cancel()
	if err := rdb.Publish(ctx, reloadChannel, msg).Err(); err != nil {
		f.log.Warn("could not announce the policy reload to other instances", "err", err)
	}
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}
