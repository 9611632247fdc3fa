package history

import (
	"bytes"
	"cmp"
	"encoding/json"
	"slices"
)

// The views, computed from the window's builds (newest first) and their
// tests; nothing here reads anything.

// BuildRef is a build of /tests: its number, state, VCS revision and when
// it completed (Bamboo's buildCompletedTime).
type BuildRef struct {
	Number      int    `json:"number"`
	State       string `json:"state"`
	VCSRevision string `json:"vcs_revision"`
	CompletedAt string `json:"completed_at"`
}

// TestRow is one test that failed in a build of the window.
type TestRow struct {
	Class  string `json:"class"`
	Method string `json:"method"`
	// Outcomes are its outcome in each build, aligned with the answer's
	// builds: passed, failed, skipped or absent.
	Outcomes []string `json:"outcomes"`
	// FailingSince is the first build of its current unbroken run of
	// failures (a pass breaks a run; a build that skipped it or did not
	// run it neither breaks nor extends it); nil when it is not failing.
	FailingSince *int `json:"failing_since"`
	Failures     int  `json:"failures"`
	// Flaky: it both passed and failed on one VCS revision; the evidence
	// names the newest two builds of that revision that disagree.
	Flaky         bool      `json:"flaky"`
	FlakyEvidence *Evidence `json:"flaky_evidence"`
	// LatestError is the message of its newest failure.
	LatestError string `json:"latest_error"`
}

// Evidence is a revision on which a test both passed and failed.
type Evidence struct {
	VCSRevision string `json:"vcs_revision"`
	Passed      int    `json:"passed"`
	Failed      int    `json:"failed"`
}

// TrendBuild is one build of /trend.
type TrendBuild struct {
	Number      int        `json:"number"`
	State       string     `json:"state"`
	DurationMS  int64      `json:"duration_ms"`
	CompletedAt string     `json:"completed_at"`
	Tests       TestCounts `json:"tests"`
}

// TestCounts are a build's test counts, as Bamboo counts them.
type TestCounts struct {
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Skipped int `json:"skipped"`
}

type testsAnswer struct {
	Plan   string     `json:"plan"`
	Last   int        `json:"last"`
	Builds []BuildRef `json:"builds"`
	Tests  []TestRow  `json:"tests"`
}

type trendAnswer struct {
	Plan   string       `json:"plan"`
	Last   int          `json:"last"`
	Builds []TrendBuild `json:"builds"`
}

func buildsOf(builds []build) []BuildRef {
	out := make([]BuildRef, len(builds))
	for i, b := range builds {
		out[i] = BuildRef{Number: b.number, State: b.state, VCSRevision: b.revision, CompletedAt: b.completed}
	}
	return out
}

func trendOf(builds []build) []TrendBuild {
	out := make([]TrendBuild, len(builds))
	for i, b := range builds {
		out[i] = TrendBuild{Number: b.number, State: b.state, DurationMS: b.durationMS, CompletedAt: b.completed,
			Tests: TestCounts{Passed: b.passed, Failed: b.failed, Skipped: b.skipped}}
	}
	return out
}

var outcomeWords = [...]string{outcomeAbsent: "absent", outcomeSkipped: "skipped", outcomePassed: "passed", outcomeFailed: "failed"}

// testRows are the tests that failed in any build (sums[i] is builds[i]'s),
// each across every build: failing now first, then flaky, then by
// failures, then by name.
func testRows(builds []build, sums []*summary) []TestRow {
	type track struct {
		class, method string
		outcomes      []byte
		messages      []string
	}
	byName := map[string]*track{}
	var order []*track
	for _, s := range sums {
		for _, t := range s.Tests {
			if t.Outcome != outcomeFailed {
				continue
			}
			name := t.Class + "\x00" + t.Method
			if byName[name] == nil {
				tr := &track{class: t.Class, method: t.Method, outcomes: make([]byte, len(builds)), messages: make([]string, len(builds))}
				byName[name] = tr
				order = append(order, tr)
			}
		}
	}
	for i, s := range sums {
		for _, t := range s.Tests {
			if tr := byName[t.Class+"\x00"+t.Method]; tr != nil {
				tr.outcomes[i], tr.messages[i] = t.Outcome, t.Message
			}
		}
	}
	rows := make([]TestRow, 0, len(order))
	for _, tr := range order {
		row := TestRow{Class: tr.class, Method: tr.method, Outcomes: make([]string, len(builds))}
		latest := -1
		for i, o := range tr.outcomes {
			row.Outcomes[i] = outcomeWords[o]
			if o == outcomeFailed {
				row.Failures++
				if latest < 0 {
					latest = i
				}
			}
		}
		row.LatestError = tr.messages[latest]
		row.FailingSince = failingSince(builds, tr.outcomes)
		row.FlakyEvidence = flakiness(builds, tr.outcomes)
		row.Flaky = row.FlakyEvidence != nil
		rows = append(rows, row)
	}
	slices.SortStableFunc(rows, func(a, b TestRow) int {
		return cmp.Or(
			-cmp.Compare(btoi(a.FailingSince != nil), btoi(b.FailingSince != nil)),
			-cmp.Compare(btoi(a.Flaky), btoi(b.Flaky)),
			-cmp.Compare(a.Failures, b.Failures),
			cmp.Compare(a.Class, b.Class),
			cmp.Compare(a.Method, b.Method),
		)
	})
	return rows
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// failingSince walks back from the newest build that ran the test: while
// it failed, the run goes on; a pass ends it.
func failingSince(builds []build, outcomes []byte) *int {
	since := -1
	for i, o := range outcomes {
		if o == outcomePassed {
			break
		}
		if o == outcomeFailed {
			since = i
		}
	}
	if since < 0 {
		return nil
	}
	n := builds[since].number
	return &n
}

// flakiness finds, newest first, a revision on which the test failed in
// one build and passed in another.
func flakiness(builds []build, outcomes []byte) *Evidence {
	type seen struct{ passed, failed int }
	byRev := map[string]*seen{}
	for i, o := range outcomes {
		rev := builds[i].revision
		if rev == "" || (o != outcomePassed && o != outcomeFailed) {
			continue
		}
		s := byRev[rev]
		if s == nil {
			s = &seen{passed: -1, failed: -1}
			byRev[rev] = s
		}
		if o == outcomePassed && s.passed < 0 {
			s.passed = builds[i].number
		}
		if o == outcomeFailed && s.failed < 0 {
			s.failed = builds[i].number
		}
		if s.passed >= 0 && s.failed >= 0 {
			return &Evidence{VCSRevision: rev, Passed: s.passed, Failed: s.failed}
		}
	}
	return nil
}

// encode writes an answer as the facade writes JSON: no HTML escaping
// (the page puts text in the DOM as text), no trailing newline.
func encode(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
