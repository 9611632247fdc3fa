package grades

import (
	"context"
	"strconv"
	"time"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/redisdb"
)

// Version is one version of a grade in its history: the record it made,
// the grade it replaced (nil for the first), and whether and when it was
// posted, by whom (a change posted as it was made, under the automatic
// policy, is posted by its author at its time).
type Version struct {
	Version       int64      `json:"version"`
	Grade         string     `json:"grade"`
	PreviousGrade *string    `json:"previous_grade"`
	UpdatedBy     string     `json:"updated_by"`
	UpdatedAt     time.Time  `json:"updated_at"`
	Posted        bool       `json:"posted"`
	PostedAt      *time.Time `json:"posted_at,omitempty"`
	PostedBy      string     `json:"posted_by,omitempty"`
}

// History returns up to limit versions of a grade, newest first (limit
// <= 0 or above AuditRetention: AuditRetention). Staff (released false)
// see every version; a student (released true) only the versions that
// were posted, each with the grade posted before it as PreviousGrade, so
// a version that waits, or was replaced before it was posted, is never
// the student's to see. It is ErrNotFound for a grade with no history;
// for a student, ErrGradeNotPosted as long as nothing was posted, and
// for no grade at all as GetPosted says (classes are the student's).
func (s *Store) History(ctx context.Context, student facade.StudentID, subject string, limit int, released bool, classes []facade.ClassID) ([]Version, error) {
	if limit <= 0 || limit > AuditRetention {
		limit = AuditRetention
	}
	// Every entry: a version's posting is newer than the version, and a
	// student's previous grade may be many versions back. Trimmed streams
	// keep a few more than AuditRetention.
	entries, err := s.auditTrail(ctx, student, subject, 2*AuditRetention)
	if err != nil {
		return nil, err
	}
	versions := historyOf(entries, released)
	switch {
	case len(entries) == 0 && released:
		return nil, s.policies.missing(ctx, classes)
	case len(versions) == 0 && released:
		return nil, facade.ErrGradeNotPosted
	case len(versions) == 0:
		return nil, facade.ErrNotFound
	}
	return versions[:min(limit, len(versions))], nil
}

// historyOf turns audit entries, newest first, into versions, newest
// first: staff's every version, a student's (released) the posted ones.
func historyOf(entries []AuditEntry, released bool) []Version {
	type posting struct {
		at time.Time
		by string
	}
	posts := map[int64]posting{}
	var versions []Version
	for _, e := range entries {
		if e.Op == OpPost {
			if _, seen := posts[e.Version]; !seen {
				posts[e.Version] = posting{e.At, e.By}
			}
			continue
		}
		if e.Op != "" {
			continue
		}
		v := Version{Version: e.Version, Grade: e.New, UpdatedBy: e.By, UpdatedAt: e.At}
		if e.Old != "" {
			old := e.Old
			v.PreviousGrade = &old
		}
		p, posted := posts[e.Version]
		if e.Posted {
			p, posted = posting{e.At, e.By}, true
		}
		if posted {
			at := p.at
			v.Posted, v.PostedAt, v.PostedBy = true, &at, p.by
		}
		if released && !posted {
			continue
		}
		versions = append(versions, v)
	}
	if released { // the grade the student saw before each version
		for i := range versions {
			versions[i].PreviousGrade = nil
			if i+1 < len(versions) {
				prev := versions[i+1].Grade
				versions[i].PreviousGrade = &prev
			}
		}
	}
	return versions
}

// Audit returns up to limit changes to one grade, newest first. limit <= 0 or
// above AuditRetention means AuditRetention. A grade that never existed has
// an empty trail (not an error).
func (s *Store) Audit(ctx context.Context, student facade.StudentID, subject string, limit int) ([]AuditEntry, error) {
	if limit <= 0 || limit > AuditRetention {
		limit = AuditRetention
	}
	return s.auditTrail(ctx, student, subject, limit)
}

// auditTrail reads up to n entries of a grade's audit stream, newest first:
// the one reader of the stream for History and Audit.
func (s *Store) auditTrail(ctx context.Context, student facade.StudentID, subject string, n int) ([]AuditEntry, error) {
	if err := CheckSubject(subject); err != nil {
		return nil, err
	}
	studentID := student.String()
	msgs, err := s.rdb.XRevRangeN(ctx, auditKey(studentID, subject), "+", "-", int64(n)).Result()
	if err != nil {
		return nil, redisdb.Error(err)
	}
	entries := make([]AuditEntry, 0, len(msgs))
	for _, m := range msgs {
		e, err := parseAuditEntry(studentID, subject, m.Values)
		if err != nil {
			return nil, err
		}
		entries = append(entries, e)
	}
	return entries, nil
}

func parseAuditEntry(studentID, subject string, v map[string]any) (AuditEntry, error) {
	text := func(k string) string { s, _ := v[k].(string); return s }
	at, errT := time.Parse(time.RFC3339, text("at"))
	version, errV := strconv.ParseInt(text("version"), 10, 64)
	if errT != nil || errV != nil {
		return AuditEntry{}, corrupt("audit entry %s/%s: %v", studentID, subject, v)
	}
	// A change written before posting existed has no posted field: it was
	// its student's as it was made.
	return AuditEntry{StudentID: studentID, Subject: subject, Op: text("op"), By: text("by"), At: at.UTC(),
		Old: text("old"), New: text("new"), Version: version, Posted: text("posted") != "0"}, nil
}
