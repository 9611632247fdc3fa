package grades

import (
	"testing"
	"time"
)

// TestARowWhoseGradeIsStoredIsUnchangedWhateverItsVersion: re-uploading a
// file already applied (its versions now old) says every row is
// unchanged, not stale: the stored grade is the file's. A row whose
// grade differs from a grade changed since is still stale.
func TestARowWhoseGradeIsStoredIsUnchangedWhateverItsVersion(t *testing.T) {
	cur := &Record{StudentID: "alice", Subject: SubjectEnglish, Grade: "B", Version: 4, UpdatedAt: time.Now(), UpdatedBy: "bob"}
	for _, c := range []struct {
		row  GradebookRow
		cur  *Record
		want Outcome
	}{
		{readRow(2, "alice", "B", "1"), cur, Unchanged}, // the file's version is old, its grade stored
		{readRow(2, "alice", "B", ""), cur, Unchanged},  // a file made before the grade existed
		{readRow(2, "alice", "B", "4"), cur, Unchanged},
		{readRow(2, "alice", "A", "1"), cur, Stale}, // changed since, to another grade
		{readRow(2, "alice", "A", "4"), cur, Changed},
		{readRow(2, "alice", "", "4"), cur, Refused},
		{readRow(2, "alice", "A", "1"), nil, Stale}, // removed since: no grade now
		{readRow(2, "alice", "", ""), nil, Unchanged},
		{readRow(2, "alice", "A", ""), nil, Changed},
	} {
		if got, _ := c.row.Decide(c.cur); got != c.want {
			t.Errorf("row %+v against %+v: %s, want %s", c.row, c.cur, got, c.want)
		}
	}
}
