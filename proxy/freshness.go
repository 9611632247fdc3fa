package proxy

import (
	"bytes"
	"time"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/cache"
)

// What a document is decides how long it is kept (docs/build-routes.md, "Freshness by state"):
//
//   - a finished build result (plan or job result named by its number)
//     never changes state: it is kept for Config.FinishedTTL and not asked
//     upstream again while cached;
//   - a queued or running result, and any list holding one, is fresh for
//     Config.LiveInterval only: read by anyone after that, it is asked
//     upstream once (the shared cache's fill lock makes that one call for
//     every reader on every instance), so a build's end is seen within an
//     interval, and nobody reading costs nothing;
//   - everything else (projects, plans, branches, lists of finished
//     results, the "latest" result, labels and comments, which people
//     add to finished results) is fresh for the cache's TTL.
//
// The state is read from the document itself when it is fetched, and the
// lifetime is stored with it in the shared cache, so every instance keeps
// it alike.

// Defaults for the zero Config fields (FACADE_CACHE_FINISHED,
// FACADE_LIVE_INTERVAL).
const (
	DefaultFinishedTTL  = 24 * time.Hour
	DefaultLiveInterval = 2 * time.Second
)

// lifeCycleKey is Bamboo's member naming a result's life-cycle state. In
// JSON text it can only be a member name: inside a string its quotes
// would be escaped.
var lifeCycleKey = []byte(`"lifeCycleState"`)

// finishedStates are Bamboo's life-cycle states after which a result no
// longer changes; the others (Queued, Pending, InProgress) and any state
// not known here count as unfinished, so an unknown one is watched rather
// than kept for a day.
var finishedStates = map[string]bool{"Finished": true, "NotBuilt": true}

// lifeCycles reports whether body holds a finished result, and whether it
// holds an unfinished one, by every lifeCycleState member in it (a plan
// result's own and those of its stages' job results).
func lifeCycles(body []byte) (finished, unfinished bool) {
	for {
		i := bytes.Index(body, lifeCycleKey)
		if i < 0 {
			return finished, unfinished
		}
		body = bytes.TrimLeft(body[i+len(lifeCycleKey):], " \t\r\n")
		if len(body) == 0 || body[0] != ':' {
			continue
		}
		body = bytes.TrimLeft(body[1:], " \t\r\n")
		state := ""
		if len(body) > 0 && body[0] == '"' {
			if end := bytes.IndexByte(body[1:], '"'); end >= 0 {
				state = string(body[1 : 1+end])
			}
		}
		if finishedStates[state] {
			finished = true
		} else {
			unfinished = true
		}
	}
}

// freshness decides documents' lifetimes (Config.FinishedTTL,
// Config.LiveInterval).
type freshness struct{ finished, live time.Duration }

// lifetime is the cache lifetime of route rt's document for key; nil
// means the cache's TTL.
func (f freshness) lifetime(rt *Route, key facade.BuildKey) cache.Lifetime {
	switch {
	case rt.Item == "result":
		return f.listLife
	case (rt.Key == KeyResult || rt.Key == KeyJobResult) && rt.List == "" && key.Number() != "latest":
		return f.resultLife
	case rt.Key == KeyResult && rt.List == "":
		// "latest" names another result when the next build finishes.
		return f.listLife
	}
	return nil
}

// listLife: live while the document holds an unfinished result, else the TTL.
func (f freshness) listLife(body []byte) time.Duration {
	if _, unfinished := lifeCycles(body); unfinished {
		return f.live
	}
	return 0
}

// resultLife: live while the result (or any of its jobs) is unfinished;
// kept for FinishedTTL once everything in it is finished.
func (f freshness) resultLife(body []byte) time.Duration {
	finished, unfinished := lifeCycles(body)
	switch {
	case unfinished:
		return f.live
	case finished:
		return f.finished
	}
	return 0
}
