package grades

import "time"

// Record is the current grade of one student in one subject, as GET returns
// it. UpdatedAt is UTC with whole seconds, so it marshals as RFC 3339 like
// "2025-03-01T10:00:00Z". Version starts at 1 and grows by one per change;
// its ETag is ETag(Version).
type Record struct {
	StudentID string    `json:"student_id"`
	Subject   string    `json:"subject"`
	Grade     string    `json:"grade"`
	UpdatedAt time.Time `json:"updated_at"`
	UpdatedBy string    `json:"updated_by"`
	Version   int64     `json:"version"`
}

// AuditEntry is one change to a grade: who made it, when, the grade before
// (Old is "" for the change that created the record) and after, and the
// version the change produced.
type AuditEntry struct {
	StudentID string    `json:"student_id"`
	Subject   string    `json:"subject"`
	By        string    `json:"by"`
	At        time.Time `json:"at"`
	Old       string    `json:"old"`
	New       string    `json:"new"`
	Version   int64     `json:"version"`
}
