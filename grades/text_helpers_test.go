package grades

import (
	"context"

	"github.com/facade-dev/facade"
)

// The store takes parsed student ids and grades. These helpers parse text
// the way the HTTP layer and the seed loader do (the student id, then the
// grade) and then call the store, so a test can still write "alice".

func (s *Store) getText(ctx context.Context, student, subject string) (Record, error) {
	id, err := facade.ParseStudentID(student)
	if err != nil {
		return Record{}, err
	}
	return s.Get(ctx, id, subject)
}

func (s *Store) createText(ctx context.Context, student, subject, grade, by string) (Record, error) {
	id, g, err := parseChange(student, grade)
	if err != nil {
		return Record{}, err
	}
	return s.Create(ctx, id, subject, g, by, nil)
}

func (s *Store) updateText(ctx context.Context, student, subject, grade, by string, ifMatch *int64) (Record, error) {
	id, g, err := parseChange(student, grade)
	if err != nil {
		return Record{}, err
	}
	return s.Update(ctx, id, subject, g, by, ifMatch, nil)
}

func (s *Store) seedText(ctx context.Context, student, subject, grade string) (bool, error) {
	id, g, err := parseChange(student, grade)
	if err != nil {
		return false, err
	}
	return s.Seed(ctx, id, subject, g)
}

func (s *Store) auditText(ctx context.Context, student, subject string, limit int) ([]AuditEntry, error) {
	id, err := facade.ParseStudentID(student)
	if err != nil {
		return nil, err
	}
	return s.Audit(ctx, id, subject, limit)
}

func parseChange(student, grade string) (facade.StudentID, Grade, error) {
	id, err := facade.ParseStudentID(student)
	if err != nil {
		return facade.StudentID{}, Grade{}, err
	}
	g, err := ParseGrade(grade)
	return id, g, err
}

// parseGradeText is ParseGrade's grade as text.
func parseGradeText(s string) (string, error) {
	g, err := ParseGrade(s)
	return g.String(), err
}

// noClasses enrolls nobody anywhere: every change is posted as it is made.
func noClasses(facade.StudentID) []facade.ClassID { return nil }
