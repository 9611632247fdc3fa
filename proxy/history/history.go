// Package history answers a plan's builds over time (docs/build-routes.md,
// "Builds over time"): which tests failed in its recent finished builds,
// since when, and which are flaky (GET /builds/{K-P}/tests), and each
// build's duration, state and test counts (GET /builds/{K-P}/trend).
//
// Both are made of finished results only, which never change, so each is
// read upstream once and kept (Config.FinishedTTL, FACADE_CACHE_FINISHED)
// in the shared cache, reduced to what the views need: a cold answer
// costs the plan's result list (one upstream call, or one per page when
// Bamboo sends fewer than asked) and one call per plan result in the
// window (its tests, below its jobs, as Bamboo keeps them); a warm one
// costs the list's cache read and nothing more. The answer itself is kept
// in process per list version, so a warm read encodes nothing.
//
// Authorization is the caller's (server/routes.go asks view on the plan
// first, as for every plan route); this package reads what it is asked.
package history

import (
	"context"
	"log/slog"
	"strconv"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/cache"
	"github.com/facade-dev/facade/upstream"
)

// Limits and defaults of the window (?last=N).
const (
	MaxLast          = 100
	DefaultTestsLast = 30
	DefaultTrendLast = 50
	// DefaultFinishedTTL is the zero Config.FinishedTTL (FACADE_CACHE_FINISHED's default).
	DefaultFinishedTTL = 24 * time.Hour
	// heldSummaries bounds the results' test summaries held in process,
	// heldAnswers the encoded answers.
	heldSummaries = 64
	heldAnswers   = 512
	// fetchers is how many results are read upstream at once on a cold
	// answer.
	fetchers = 4
)

// Config tunes a History; the zero Config works.
type Config struct {
	// FinishedTTL is how long a finished result's tests are kept in the
	// shared cache (FACADE_CACHE_FINISHED). Zero means DefaultFinishedTTL.
	FinishedTTL time.Duration
	// Log receives nothing today; nil means slog.Default().
	Log *slog.Logger
}

// History answers the plans' builds over time. Create it with New; it is
// safe for concurrent use.
type History struct {
	up        *upstream.Client
	cache     *cache.Cache
	cfg       Config
	summaries *lru.Cache[string, *summary] // result key -> its tests
	answers   *lru.Cache[string, []byte]   // view, plan, window and list version -> encoded answer
}

// New returns a History reading from up through c, both required.
func New(up *upstream.Client, c *cache.Cache, cfg Config) *History {
	if cfg.FinishedTTL <= 0 {
		cfg.FinishedTTL = DefaultFinishedTTL
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	s, _ := lru.New[string, *summary](heldSummaries) // errors only for a size below 1
	a, _ := lru.New[string, []byte](heldAnswers)
	return &History{up: up, cache: c, cfg: cfg, summaries: s, answers: a}
}

// ParseLast reads ?last: "" is def, else 1 to MaxLast in plain digits; a
// refusal names the parameter as every bad query parameter does.
func ParseLast(raw string, given bool, def int) (int, error) {
	if !given {
		return def, nil
	}
	n := 0
	if len(raw) < 1 || len(raw) > 3 {
		return 0, facade.Refuse(facade.ErrBadParameter, "last", facade.ReasonMalformed)
	}
	for i := 0; i < len(raw); i++ {
		if raw[i] < '0' || raw[i] > '9' {
			return 0, facade.Refuse(facade.ErrBadParameter, "last", facade.ReasonMalformed)
		}
		n = n*10 + int(raw[i]-'0')
	}
	if n < 1 || n > MaxLast {
		return 0, facade.Refuse(facade.ErrBadParameter, "last", facade.ReasonOutOfRange)
	}
	return n, nil
}

// Tests is GET /builds/{K-P}/tests?last=N: the encoded answer.
func (h *History) Tests(ctx context.Context, plan facade.PlanKey, last int) ([]byte, error) {
	return h.answer(ctx, "tests", plan, last, func(builds []build) ([]byte, error) {
		sums, err := h.summariesOf(ctx, builds)
		if err != nil {
			return nil, err
		}
		return encode(testsAnswer{Plan: plan.String(), Last: last, Builds: buildsOf(builds), Tests: testRows(builds, sums)})
	})
}

// Trend is GET /builds/{K-P}/trend?last=N: the encoded answer, from the
// result list alone.
func (h *History) Trend(ctx context.Context, plan facade.PlanKey, last int) ([]byte, error) {
	return h.answer(ctx, "trend", plan, last, func(builds []build) ([]byte, error) {
		return encode(trendAnswer{Plan: plan.String(), Last: last, Builds: trendOf(builds)})
	})
}

// answer is the view's answer for the plan's newest last finished builds:
// held in process per version of the result list, else made by make.
func (h *History) answer(ctx context.Context, view string, plan facade.PlanKey, last int, make func([]build) ([]byte, error)) ([]byte, error) {
	all, version, err := h.window(ctx, plan)
	if err != nil {
		return nil, err
	}
	builds := all[:min(last, len(all))]
	key := view + "\x00" + plan.String() + "\x00" + version + "\x00" + strconv.Itoa(last)
	if b, ok := h.answers.Get(key); ok {
		return b, nil
	}
	b, err := make(builds)
	if err != nil {
		return nil, err
	}
	h.answers.Add(key, b)
	return b, nil
}
