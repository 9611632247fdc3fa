package grades

import (
	"fmt"
	"testing"
)

// TestApplyRowsInPipelines: more rows than one pipeline carries are each
// applied at their version; a row someone changed since the file was
// checked comes back stale with the record as it now stands (nothing of
// it written; set in between to the row's own value, it is unchanged), and an empty
// version creates the grade.
func TestApplyRowsInPipelines(t *testing.T) {
	ctx := t.Context()
	now := t0
	s, rdb := newStore(t, &now)
	const n = applyBatch + 37
	var rows []GradebookRow
	for i := range n {
		id := fmt.Sprintf("s%04d", i)
		if _, err := s.createText(ctx, id, SubjectEnglish, "B", "seed"); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, readRow(i+2, id, "A", "1"))
	}
	rows = append(rows, readRow(n+2, "newcomer", "C", ""))
	// In between: s0003 changed by someone else, s0007 set to A already.
	if _, err := s.updateText(ctx, "s0003", SubjectEnglish, "F", "frank", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.updateText(ctx, "s0007", SubjectEnglish, "A", "frank", nil); err != nil {
		t.Fatal(err)
	}
	got, err := s.ApplyRows(ctx, rows, SubjectEnglish, "bob", noClasses)
	if err != nil || len(got) != n+1 {
		t.Fatalf("ApplyRows: %d results, %v", len(got), err)
	}
	for i, r := range got {
		want, version, grade := Changed, int64(2), "A"
		switch rows[i].StudentID {
		case "s0003":
			want, grade = Stale, "F"
		case "s0007":
			want = Unchanged // the file's grade, set in between: nothing to say stale about
		case "newcomer":
			version, grade = 1, "C"
		}
		if r.Outcome != want || r.Record.Version != version || r.Record.Grade != grade {
			t.Fatalf("row %s: %s %+v, want %s at version %d with %s", rows[i].StudentID, r.Outcome, r.Record, want, version, grade)
		}
	}
	if r, _ := s.getText(ctx, "s0003", SubjectEnglish); r.Grade != "F" || r.UpdatedBy != "frank" {
		t.Errorf("the stale row was written: %+v", r)
	}
	if n, _ := rdb.XLen(ctx, auditKey("s0520", SubjectEnglish)).Result(); n != 2 {
		t.Errorf("s0520's audit trail (in the second pipeline) holds %d entries, want 2", n)
	}
}
