package grades

import "time"

// Record is the grade of one student in one subject, as GET returns it.
// UpdatedAt is UTC with whole seconds, so it marshals as RFC 3339 like
// "2025-03-01T10:00:00Z". Version starts at 1 and grows by one per change;
// its ETag is ETag(Version) (StaffETag for staff, who may see an unposted
// one). Posted says whether this version is the one its student sees
// (docs/contract.md §4, "When students see a grade"): always true for the
// record a student reads.
type Record struct {
	StudentID string    `json:"student_id"`
	Subject   string    `json:"subject"`
	Grade     string    `json:"grade"`
	UpdatedAt time.Time `json:"updated_at"`
	UpdatedBy string    `json:"updated_by"`
	Version   int64     `json:"version"`
	Posted    bool      `json:"posted"`
}

// AuditEntry is one event of a grade's trail. A change (Op "") says who
// made it, when, the grade before (Old is "" for the change that created
// the record) and after, the version it produced, and whether it was
// posted as it was made (the automatic policy). A posting (Op "post")
// says who released which version (New, Version) to the student when.
type AuditEntry struct {
	StudentID string    `json:"student_id"`
	Subject   string    `json:"subject"`
	Op        string    `json:"op,omitempty"`
	By        string    `json:"by"`
	At        time.Time `json:"at"`
	Old       string    `json:"old"`
	New       string    `json:"new"`
	Version   int64     `json:"version"`
	Posted    bool      `json:"posted"`
}

// OpPost is the Op of an audit entry that records a posting.
const OpPost = "post"
