package grades

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/internal/testkit/testredis"
)

var t0 = time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)

// newStore returns a Store on a fresh database whose clock reads *now.
func newStore(t testing.TB, now *time.Time) (*Store, *redis.Client) {
	rdb := testredis.Client(t)
	s := NewStore(rdb, Config{Log: slog.New(slog.DiscardHandler), Now: func() time.Time { return *now }})
	return s, rdb
}

func int64p(v int64) *int64 { return &v }

func TestCreateGetUpdateSeed(t *testing.T) {
	ctx := t.Context()
	now := t0.Add(123 * time.Millisecond) // stored to the second
	s, _ := newStore(t, &now)

	created, err := s.createText(ctx, "alice", SubjectEnglish, "B+", "bob")
	if err != nil {
		t.Fatal(err)
	}
	want := Record{StudentID: "alice", Subject: "english", Grade: "B+", UpdatedAt: t0, UpdatedBy: "bob", Version: 1, Posted: true}
	if created != want {
		t.Fatalf("Create = %+v, want %+v", created, want)
	}
	if got, err := s.getText(ctx, "alice", SubjectEnglish); err != nil || got != want {
		t.Fatalf("Get after Create = %+v, %v; want %+v", got, err, want)
	}

	now = t0.Add(time.Hour)
	updated, err := s.updateText(ctx, "alice", SubjectEnglish, "A-", "carol", nil)
	if err != nil {
		t.Fatal(err)
	}
	want = Record{StudentID: "alice", Subject: "english", Grade: "A-", UpdatedAt: now, UpdatedBy: "carol", Version: 2, Posted: true}
	if updated != want {
		t.Fatalf("Update = %+v, want %+v", updated, want)
	}

	updated, err = s.updateText(ctx, "alice", SubjectEnglish, "A", "bob", int64p(2))
	if err != nil || updated.Version != 3 || updated.Grade != "A" {
		t.Fatalf("Update with matching If-Match = %+v, %v; want version 3 grade A", updated, err)
	}
	if got, _ := s.getText(ctx, "alice", SubjectEnglish); got != updated {
		t.Fatalf("Get after Update = %+v, want %+v", got, updated)
	}

	// Seed never overwrites what users changed.
	if ok, err := s.seedText(ctx, "alice", SubjectEnglish, "F"); ok || err != nil {
		t.Fatalf("Seed over an existing grade = %v, %v; want false, nil", ok, err)
	}
	if got, _ := s.getText(ctx, "alice", SubjectEnglish); got != updated {
		t.Fatalf("Seed changed an existing grade: %+v", got)
	}
	if ok, err := s.seedText(ctx, "dave", SubjectEnglish, "C"); !ok || err != nil {
		t.Fatalf("Seed of a new grade = %v, %v; want true, nil", ok, err)
	}
	seeded, err := s.getText(ctx, "dave", SubjectEnglish)
	if err != nil || seeded.Grade != "C" || seeded.UpdatedBy != SeedActor || seeded.Version != 1 {
		t.Fatalf("seeded record = %+v, %v", seeded, err)
	}
}

func TestRecordJSON(t *testing.T) {
	rec := Record{StudentID: "alice", Subject: "english", Grade: "B+", UpdatedAt: t0, UpdatedBy: "bob", Version: 3, Posted: true}
	got, _ := json.Marshal(rec)
	want := `{"student_id":"alice","subject":"english","grade":"B+","updated_at":"2025-03-01T10:00:00Z","updated_by":"bob","version":3,"posted":true}`
	if string(got) != want {
		t.Fatalf("JSON = %s\nwant   %s", got, want)
	}
	if ETag(rec.Version) != `"3"` {
		t.Fatalf("ETag = %s", ETag(rec.Version))
	}
}

func TestGetAbsentIsNotFound(t *testing.T) {
	s, _ := newStore(t, &t0)
	_, err := s.getText(t.Context(), "alice", SubjectEnglish)
	wantError(t, err, facade.ErrNotFound)
}

func TestCreateTwiceConflictsAndKeepsTheFirst(t *testing.T) {
	ctx := t.Context()
	s, _ := newStore(t, &t0)
	first, err := s.createText(ctx, "alice", SubjectEnglish, "B", "bob")
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.createText(ctx, "alice", SubjectEnglish, "A", "carol")
	wantError(t, err, facade.ErrGradeExists)
	if got, _ := s.getText(ctx, "alice", SubjectEnglish); got != first {
		t.Fatalf("after a refused Create the record is %+v, want %+v", got, first)
	}
	if trail, _ := s.auditText(ctx, "alice", SubjectEnglish, 0); len(trail) != 1 {
		t.Fatalf("audit has %d entries after a refused Create, want 1", len(trail))
	}
}

func TestUpdateAbsentIsNotFoundAndCreatesNothing(t *testing.T) {
	ctx := t.Context()
	s, rdb := newStore(t, &t0)
	_, err := s.updateText(ctx, "alice", SubjectEnglish, "A", "bob", nil)
	wantError(t, err, facade.ErrNotFound)
	_, err = s.updateText(ctx, "alice", SubjectEnglish, "A", "bob", int64p(1))
	wantError(t, err, facade.ErrNotFound)
	if n := rdb.DBSize(ctx).Val(); n != 0 {
		t.Fatalf("refused Update left %d keys", n)
	}
}

func TestStaleIfMatchChangesNothing(t *testing.T) {
	ctx := t.Context()
	s, _ := newStore(t, &t0)
	if _, err := s.createText(ctx, "alice", SubjectEnglish, "B", "bob"); err != nil {
		t.Fatal(err)
	}
	current, err := s.updateText(ctx, "alice", SubjectEnglish, "B+", "bob", int64p(1))
	if err != nil {
		t.Fatal(err)
	}
	for _, stale := range []int64{1, 0, 3, 99} {
		_, err = s.updateText(ctx, "alice", SubjectEnglish, "F", "mallory", int64p(stale))
		wantError(t, err, facade.ErrVersionMismatch)
	}
	if got, _ := s.getText(ctx, "alice", SubjectEnglish); got != current {
		t.Fatalf("after stale updates the record is %+v, want %+v", got, current)
	}
	if trail, _ := s.auditText(ctx, "alice", SubjectEnglish, 0); len(trail) != 2 {
		t.Fatalf("audit has %d entries after stale updates, want 2", len(trail))
	}
}

func TestAuditRecordsWhoWhenOldNewNewestFirst(t *testing.T) {
	ctx := t.Context()
	now := t0
	s, _ := newStore(t, &now)
	steps := []struct {
		by, grade string
		at        time.Time
	}{
		{"bob", "B", t0},
		{"carol", "B+", t0.Add(time.Minute)},
		{"bob", "A", t0.Add(2 * time.Minute)},
	}
	for i, st := range steps {
		now = st.at
		var err error
		if i == 0 {
			_, err = s.createText(ctx, "alice", SubjectEnglish, st.grade, st.by)
		} else {
			_, err = s.updateText(ctx, "alice", SubjectEnglish, st.grade, st.by, nil)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	want := []AuditEntry{
		{StudentID: "alice", Subject: "english", By: "bob", At: t0.Add(2 * time.Minute), Old: "B+", New: "A", Version: 3, Posted: true},
		{StudentID: "alice", Subject: "english", By: "carol", At: t0.Add(time.Minute), Old: "B", New: "B+", Version: 2, Posted: true},
		{StudentID: "alice", Subject: "english", By: "bob", At: t0, Old: "", New: "B", Version: 1, Posted: true},
	}
	got, err := s.auditText(ctx, "alice", SubjectEnglish, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("audit = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("audit[%d] = %+v, want %+v", i, got[i], want[i])
		}
	}
	if two, _ := s.auditText(ctx, "alice", SubjectEnglish, 2); len(two) != 2 || two[0] != want[0] || two[1] != want[1] {
		t.Errorf("Audit(limit 2) = %+v, want the newest two", two)
	}
	if none, err := s.auditText(ctx, "bob", SubjectEnglish, 0); err != nil || len(none) != 0 {
		t.Errorf("audit of a grade that never existed = %+v, %v; want empty", none, err)
	}
}

func TestAuditIsBounded(t *testing.T) {
	ctx := t.Context()
	s, rdb := newStore(t, &t0)
	if _, err := s.createText(ctx, "alice", SubjectEnglish, "B", "bob"); err != nil {
		t.Fatal(err)
	}
	const changes = AuditRetention + 500
	for i := 1; i < changes; i++ {
		if _, err := s.updateText(ctx, "alice", SubjectEnglish, scale[i%len(scale)], "bob", nil); err != nil {
			t.Fatal(err)
		}
	}
	if n := rdb.XLen(ctx, auditKey("alice", SubjectEnglish)).Val(); n < AuditRetention || n > AuditRetention+200 {
		t.Fatalf("audit stream holds %d entries after %d changes, want about %d", n, changes, AuditRetention)
	}
	trail, err := s.auditText(ctx, "alice", SubjectEnglish, 0)
	if err != nil || len(trail) != AuditRetention || trail[0].Version != changes {
		t.Fatalf("Audit = %d entries (newest version %d), %v; want %d, newest %d",
			len(trail), trail[0].Version, err, AuditRetention, changes)
	}
}

func TestEachChangeIsLoggedAsAnAuditLine(t *testing.T) {
	ctx := t.Context()
	var buf bytes.Buffer
	s := NewStore(testredis.Client(t), Config{Log: slog.New(slog.NewJSONHandler(&buf, nil))})
	if _, err := s.createText(ctx, "alice", SubjectEnglish, "B", "bob"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.updateText(ctx, "alice", SubjectEnglish, "A", "carol", int64p(1)); err != nil {
		t.Fatal(err)
	}
	_, _ = s.updateText(ctx, "alice", SubjectEnglish, "F", "mallory", int64p(1)) // stale: not a change
	_, _ = s.createText(ctx, "alice", SubjectEnglish, "F", "mallory")            // exists: not a change

	var lines []map[string]any
	for sc := bufio.NewScanner(&buf); sc.Scan(); {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		lines = append(lines, m)
	}
	want := []map[string]any{
		{"audit": true, "op": "create", "who": "bob", "student": "alice", "subject": "english", "old": "", "new": "B", "version": 1.0},
		{"audit": true, "op": "update", "who": "carol", "student": "alice", "subject": "english", "old": "B", "new": "A", "version": 2.0},
	}
	if len(lines) != len(want) {
		t.Fatalf("logged %d lines, want %d: %v", len(lines), len(want), lines)
	}
	for i, w := range want {
		for k, v := range w {
			if lines[i][k] != v {
				t.Errorf("line %d: %s = %v, want %v", i, k, lines[i][k], v)
			}
		}
	}
}

func TestMalformedInputIsRefusedAndStoresNothing(t *testing.T) {
	ctx := t.Context()
	s, rdb := newStore(t, &t0)
	for _, g := range []string{"a+", "E", "", "A "} {
		_, err := s.createText(ctx, "alice", SubjectEnglish, g, "bob")
		wantError(t, err, facade.ErrBadGrade)
		_, err = s.seedText(ctx, "alice", SubjectEnglish, g)
		wantError(t, err, facade.ErrBadGrade)
	}
	for _, id := range []string{"", "a:b", "{alice}", "al ice", "alice/..", "élise", string(make([]byte, 65))} {
		_, err := s.createText(ctx, id, SubjectEnglish, "A", "bob")
		wantError(t, err, facade.ErrBadIdentifier)
		_, err = s.getText(ctx, id, SubjectEnglish)
		wantError(t, err, facade.ErrBadIdentifier)
	}
	for _, subject := range []string{"", "English", "english:audit", "a}b"} {
		_, err := s.createText(ctx, "alice", subject, "A", "bob")
		wantError(t, err, facade.ErrBadIdentifier)
	}
	_, err := s.createText(ctx, "alice", SubjectEnglish, "A", "")
	wantError(t, err, facade.ErrInternal)
	if n := rdb.DBSize(ctx).Val(); n != 0 {
		t.Fatalf("refused input left %d keys", n)
	}
}

// race runs n calls of op at once and returns their errors.
func race(n int, op func(i int) error) []error {
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			errs[i] = op(i)
		})
	}
	close(start)
	wg.Wait()
	return errs
}

func TestConcurrentUpdatesWithOneIfMatchHaveOneWinner(t *testing.T) {
	ctx := t.Context()
	s, _ := newStore(t, &t0)
	if _, err := s.createText(ctx, "alice", SubjectEnglish, "C", "bob"); err != nil {
		t.Fatal(err)
	}
	winners := make([]Record, 50)
	// Every writer sets a grade other than the stored C: setting C again
	// would change nothing and succeed beside the winner.
	others := slices.DeleteFunc(Scale(), func(g string) bool { return g == "C" })
	errs := race(50, func(i int) (err error) {
		winners[i], err = s.updateText(ctx, "alice", SubjectEnglish, others[i%len(others)], "bob", int64p(1))
		return err
	})
	var won []Record
	for i, err := range errs {
		if err == nil {
			won = append(won, winners[i])
			continue
		}
		wantError(t, err, facade.ErrVersionMismatch)
	}
	if len(won) != 1 {
		t.Fatalf("%d updates succeeded with the same If-Match, want exactly 1", len(won))
	}
	if got, _ := s.getText(ctx, "alice", SubjectEnglish); got != won[0] || got.Version != 2 {
		t.Fatalf("stored %+v, the winner got %+v", got, won[0])
	}
	if trail, _ := s.auditText(ctx, "alice", SubjectEnglish, 0); len(trail) != 2 {
		t.Fatalf("audit has %d entries, want 2", len(trail))
	}
}

func TestConcurrentCreatesHaveOneWinner(t *testing.T) {
	ctx := t.Context()
	s, _ := newStore(t, &t0)
	winners := make([]Record, 50)
	errs := race(50, func(i int) (err error) {
		winners[i], err = s.createText(ctx, "alice", SubjectEnglish, scale[i%len(scale)], "bob")
		return err
	})
	var won []Record
	for i, err := range errs {
		if err == nil {
			won = append(won, winners[i])
			continue
		}
		wantError(t, err, facade.ErrGradeExists)
	}
	if len(won) != 1 {
		t.Fatalf("%d creates succeeded, want exactly 1", len(won))
	}
	if got, _ := s.getText(ctx, "alice", SubjectEnglish); got != won[0] || got.Version != 1 {
		t.Fatalf("stored %+v, the winner got %+v", got, won[0])
	}
	if trail, _ := s.auditText(ctx, "alice", SubjectEnglish, 0); len(trail) != 1 {
		t.Fatalf("audit has %d entries, want 1", len(trail))
	}
}

func TestRedisDownIsUnavailableThenRecovers(t *testing.T) {
	ctx := t.Context()
	srv := testredis.Start(t, testredis.Options{AOF: true})
	s := NewStore(srv.Client(t), Config{Log: slog.New(slog.DiscardHandler)})
	before, err := s.createText(ctx, "alice", SubjectEnglish, "B", "bob")
	if err != nil {
		t.Fatal(err)
	}

	srv.Stop()
	calls := map[string]func() error{
		"Get":    func() error { _, err := s.getText(ctx, "alice", SubjectEnglish); return err },
		"Create": func() error { _, err := s.createText(ctx, "carol", SubjectEnglish, "A", "bob"); return err },
		"Update": func() error { _, err := s.updateText(ctx, "alice", SubjectEnglish, "A", "bob", nil); return err },
		"Seed":   func() error { _, err := s.seedText(ctx, "carol", SubjectEnglish, "A"); return err },
		"Audit":  func() error { _, err := s.auditText(ctx, "alice", SubjectEnglish, 10); return err },
	}
	// In parallel: with go-redis defaults each call spends about 1.7 s
	// redialling before it gives up.
	var wg sync.WaitGroup
	for name, call := range calls {
		wg.Go(func() {
			began := time.Now()
			err := call()
			t.Logf("%s with Redis down answered in %v", name, time.Since(began).Round(time.Millisecond))
			var fe *facade.Error
			if !errors.As(err, &fe) || fe.Code != facade.ErrStoreUnavailable.Code || fe.Err == nil {
				t.Errorf("%s with Redis down: %#v; want ErrStoreUnavailable, cause kept", name, err)
			}
		})
	}
	wg.Wait()

	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	// The client stops dialling a dead server for a while (go-redis's dial
	// circuit breaker probes once a second, for its pipeline connections,
	// which reads use, and its others apart), so wait for the same Store
	// to serve reads and writes again: no restart of the service may be
	// needed.
	var got Record
	eventually(t, "Get after restart", func() (err error) {
		got, err = s.getText(ctx, "alice", SubjectEnglish)
		return err
	})
	if got != before {
		t.Fatalf("after restart Get = %+v; want %+v (kept by AOF)", got, before)
	}
	eventually(t, "Update after restart", func() error {
		_, err := s.updateText(ctx, "alice", SubjectEnglish, "A", "bob", int64p(1))
		return err
	})
}

// eventually retries call for up to 30 s until it succeeds.
func eventually(t *testing.T, what string, call func() error) {
	t.Helper()
	err := call()
	for deadline := time.Now().Add(30 * time.Second); err != nil && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		err = call()
	}
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func BenchmarkGet(b *testing.B) {
	s, _ := newStore(b, &t0)
	if _, err := s.createText(b.Context(), "alice", SubjectEnglish, "B", "bob"); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := s.getText(b.Context(), "alice", SubjectEnglish); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkUpdate(b *testing.B) {
	s, _ := newStore(b, &t0)
	if _, err := s.createText(b.Context(), "alice", SubjectEnglish, "B", "bob"); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := s.updateText(b.Context(), "alice", SubjectEnglish, "A", "bob", nil); err != nil {
			b.Fatal(err)
		}
	}
}
