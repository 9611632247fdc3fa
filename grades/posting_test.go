package grades

import (
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/facade-dev/facade"
)

func classes(ids ...string) []facade.ClassID {
	out := make([]facade.ClassID, len(ids))
	for i, id := range ids {
		out[i], _ = facade.ParseClassID(id)
	}
	return out
}

// TestNoGradeStaysUnpostedUnderAnAutomaticPolicy: writers change grades
// of a manual class while the class turns automatic: whatever the
// interleaving, once both are done no grade waits (SetPolicy writes the
// policy before it posts; a writer that read "manual" looks again).
func TestNoGradeStaysUnpostedUnderAnAutomaticPolicy(t *testing.T) {
	ctx := t.Context()
	now := t0
	s, rdb := newStore(t, &now)
	class := classes("english-101")
	var students []facade.StudentID
	for i := range 20 {
		id, _ := facade.ParseStudentID("s" + string(rune('a'+i)))
		students = append(students, id)
	}
	for round := range 20 {
		rdb.FlushDB(ctx)
		if _, err := s.SetPolicy(ctx, class[0], Manual, nil, SubjectEnglish, "lena"); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for _, id := range students {
			wg.Go(func() {
				if _, err := s.Create(ctx, id, SubjectEnglish, Grade{"B"}, "bob", class); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Go(func() {
			if _, err := s.SetPolicy(ctx, class[0], Automatic, students, SubjectEnglish, "lena"); err != nil {
				t.Error(err)
			}
		})
		wg.Wait()
		if n, err := s.Unposted(ctx, students, SubjectEnglish); err != nil || n != 0 {
			t.Fatalf("round %d: %d grades wait under the automatic policy (%v)", round, n, err)
		}
	}
}

// TestAHeldChangeKeepsWhatTheStudentSaw: a grade stored before posting
// existed (no posted field) was its student's; a held change keeps it as
// the released record, a post releases the new one, and the student's
// history shows the posted versions only.
func TestAHeldChangeKeepsWhatTheStudentSaw(t *testing.T) {
	ctx := t.Context()
	now := t0
	s, rdb := newStore(t, &now)
	alice, _ := facade.ParseStudentID("alice")
	// As the service wrote it before posting existed.
	rdb.HSet(ctx, recordKey("alice", SubjectEnglish), "grade", "B", "version", "1", "updated_at", "2025-03-01T10:00:00Z", "updated_by", "bob")
	rdb.XAdd(ctx, &redis.XAddArgs{Stream: auditKey("alice", SubjectEnglish), Values: []any{"by", "bob", "at", "2025-03-01T10:00:00Z", "old", "", "new", "B", "version", "1"}})
	class := classes("english-101")
	if _, err := s.SetPolicy(ctx, class[0], Manual, nil, SubjectEnglish, "lena"); err != nil {
		t.Fatal(err)
	}
	for _, g := range []string{"A", "C"} {
		if rec, err := s.Update(ctx, alice, SubjectEnglish, Grade{g}, "bob", nil, class); err != nil || rec.Posted {
			t.Fatalf("held update to %s: %+v %v", g, rec, err)
		}
	}
	seen, err := s.GetPosted(ctx, alice, SubjectEnglish, class)
	if err != nil || seen.Grade != "B" || seen.Version != 1 || !seen.Posted {
		t.Fatalf("the student reads %+v %v, want B at version 1", seen, err)
	}
	if h, err := s.History(ctx, alice, SubjectEnglish, 0, true, class); err != nil || len(h) != 1 || h[0].Grade != "B" {
		t.Fatalf("the student's history before the post: %+v %v", h, err)
	}
	res, err := s.Post(ctx, []facade.StudentID{alice}, SubjectEnglish, "lena")
	if err != nil || res.Posted != 1 {
		t.Fatalf("post: %+v %v", res, err)
	}
	if again, _ := s.Post(ctx, []facade.StudentID{alice}, SubjectEnglish, "lena"); again.Posted != 0 {
		t.Fatalf("a second post posted %d", again.Posted)
	}
	seen, _ = s.GetPosted(ctx, alice, SubjectEnglish, class)
	if seen.Grade != "C" || seen.Version != 3 {
		t.Fatalf("after the post the student reads %+v", seen)
	}
	h, err := s.History(ctx, alice, SubjectEnglish, 0, true, class)
	if err != nil || len(h) != 2 || h[0].Grade != "C" || *h[0].PreviousGrade != "B" || h[0].PostedBy != "lena" || h[1].Version != 1 {
		t.Fatalf("the student's history after the post: %+v %v", h, err)
	}
	staff, _ := s.History(ctx, alice, SubjectEnglish, 0, false, class)
	if len(staff) != 3 || staff[1].Grade != "A" || staff[1].Posted || *staff[0].PreviousGrade != "A" {
		t.Fatalf("staff's history: %+v", staff)
	}
}

// TestSummarizeCountsInScaleOrder: counts best first, the median the
// lower middle grade of an even count, unposted counted.
func TestSummarizeCountsInScaleOrder(t *testing.T) {
	recs := []Record{{Grade: "F", Posted: true}, {Grade: "A"}, {Grade: "B+", Posted: true}, {Grade: "C", Posted: true}}
	got := Summarize(recs, 6)
	if got.Enrolled != 6 || got.Graded != 4 || got.Unposted != 1 || got.Median == nil || *got.Median != "C" ||
		got.Counts[1].Grade != "A" || got.Counts[1].Count != 1 || got.Counts[12].Grade != "F" || got.Counts[12].Count != 1 {
		t.Fatalf("%+v", got)
	}
	if got := Summarize(recs[:3], 3); *got.Median != "B+" {
		t.Fatalf("odd count: median %s", *got.Median)
	}
	if got := Summarize(nil, 2); got.Median != nil || got.Graded != 0 || len(got.Counts) != len(Scale()) {
		t.Fatalf("no grade: %+v", got)
	}
}

// TestAChangeHeldJustAsThePolicyTurnsAutomaticIsPosted: the exact
// interleaving the concurrent test may miss. The writer reads "manual";
// before its script runs, another instance turns the class automatic and
// posts what waits (nothing yet); the writer's change, held, is posted
// when the writer looks at the policy again.
func TestAChangeHeldJustAsThePolicyTurnsAutomaticIsPosted(t *testing.T) {
	ctx := t.Context()
	now := t0
	other, rdb := newStore(t, &now)
	class := classes("english-101")
	alice, _ := facade.ParseStudentID("alice")
	if _, err := other.SetPolicy(ctx, class[0], Manual, nil, SubjectEnglish, "lena"); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	// The writer's clock is read between its policy read and its script:
	// the other instance turns the policy automatic right there.
	writer := NewStore(rdb, Config{Log: other.log, Now: func() time.Time {
		once.Do(func() {
			if _, err := other.SetPolicy(ctx, class[0], Automatic, []facade.StudentID{alice}, SubjectEnglish, "lena"); err != nil {
				t.Error(err)
			}
		})
		return t0
	}})
	rec, err := writer.Create(ctx, alice, SubjectEnglish, Grade{"B"}, "bob", class)
	if err != nil || !rec.Posted {
		t.Fatalf("the change: %+v %v, want posted", rec, err)
	}
	if seen, err := writer.GetPosted(ctx, alice, SubjectEnglish, class); err != nil || seen.Grade != "B" {
		t.Fatalf("the student reads %+v %v", seen, err)
	}
}
