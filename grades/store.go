package grades

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/redisdb"
)

const (
	// SeedActor is recorded as the author of grades created by Seed.
	SeedActor = "seed"

	// AuditRetention is about how many changes are kept per grade (Redis
	// trims the stream in whole blocks, so a few more may remain) and the
	// most Audit returns. The slog audit lines are the unbounded record.
	AuditRetention = 1000
)

// Operations, as passed to the script and logged.
const (
	opCreate = "create"
	opUpdate = "update"
	opSeed   = "seed"
)

var (
	// subjectPattern keeps subjects to plain words that cannot break a key.
	subjectPattern = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,63}$`)
)

// Store reads and changes grades in Redis. Use NewStore; the zero Store has
// no client and is not usable. A Store is safe for concurrent use.
type Store struct {
	rdb      redis.UniversalClient
	reads    *redisdb.Batcher // concurrent grade reads share pipelines (redisdb.Batcher says why)
	policies policies         // the classes' posting policies (posting.go)
	log      *slog.Logger
	now      func() time.Time // Config.Now
}

// Config tunes a Store. The zero Config works: every field documents
// what its zero value means.
type Config struct {
	// Log receives the audit lines; nil means slog.Default().
	Log *slog.Logger
	// Now is the clock a grade change is stamped with; nil means
	// time.Now.
	Now func() time.Time
}

// readPipelines is how many read pipelines may be in flight at once (as
// accounts' pipelines: bench/run.sh).
const readPipelines = 4

// NewStore returns a Store on rdb, tuned by cfg. It does not contact
// Redis.
func NewStore(rdb redis.UniversalClient, cfg Config) *Store {
	s := &Store{rdb: rdb, reads: redisdb.NewBatcher(rdb, readPipelines), policies: policies{rdb}, log: cfg.Log, now: cfg.Now}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s
}

// Get returns the current grade, as staff see it (Posted says whether its
// student sees it too), or ErrNotFound.
func (s *Store) Get(ctx context.Context, student facade.StudentID, subject string) (Record, error) {
	rec, _, err := s.get(ctx, student, subject)
	return rec, err
}

// get reads a grade's hash, one command: the current record and the
// released one (nil: never posted).
func (s *Store) get(ctx context.Context, student facade.StudentID, subject string) (Record, *Record, error) {
	if err := CheckSubject(subject); err != nil {
		return Record{}, nil, err
	}
	studentID := student.String()
	var cmd *redis.MapStringStringCmd
	s.reads.Do(ctx, func(p redis.Pipeliner) { cmd = p.HGetAll(ctx, recordKey(studentID, subject)) })
	fields, err := cmd.Result()
	if err != nil {
		return Record{}, nil, redisdb.Error(err)
	}
	if len(fields) == 0 {
		return Record{}, nil, facade.ErrNotFound
	}
	return parseStored(studentID, subject, fields)
}

// GetPosted returns the grade as its student reads it: the version last
// posted, whatever changed since (docs/contract.md §4). It is
// ErrGradeNotPosted when no version of it was ever posted. With no grade
// at all it is ErrNotFound while none of classes (the student's) has the
// manual policy (nothing can wait, so nothing leaks), and
// ErrGradeNotPosted once one has: the student cannot tell a grade that
// waits from none, so entering one they may not see yet changes nothing
// they can read. Only that miss reads the policies: a read of a grade
// costs what Get costs (the same one command), since the released record
// lives in the grade's own hash, whatever the policy.
func (s *Store) GetPosted(ctx context.Context, student facade.StudentID, subject string, classes []facade.ClassID) (Record, error) {
	_, released, err := s.get(ctx, student, subject)
	if errors.Is(err, facade.ErrNotFound) {
		return Record{}, s.policies.missing(ctx, classes)
	}
	if err != nil {
		return Record{}, err
	}
	if released == nil {
		return Record{}, facade.ErrGradeNotPosted
	}
	return *released, nil
}

// GetMany returns the current grades of several students in one round trip,
// keyed by student id; a student without a grade is absent from the map.
func (s *Store) GetMany(ctx context.Context, studentIDs []facade.StudentID, subject string) (map[facade.StudentID]Record, error) {
	if err := CheckSubject(subject); err != nil {
		return nil, err
	}
	cmds := make([]*redis.MapStringStringCmd, len(studentIDs))
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range studentIDs {
			cmds[i] = p.HGetAll(ctx, recordKey(id.String(), subject))
		}
		return nil
	})
	if err != nil {
		return nil, redisdb.Error(err)
	}
	out := make(map[facade.StudentID]Record, len(studentIDs))
	for i, id := range studentIDs {
		fields := cmds[i].Val()
		if len(fields) == 0 {
			continue
		}
		rec, _, err := parseStored(id.String(), subject, fields)
		if err != nil {
			return nil, err
		}
		out[id] = rec
	}
	return out, nil
}

// Create stores a new grade at version 1. It is ErrGradeExists when the student
// already has a grade in subject, whatever its value. classes are the
// classes the student is enrolled in: when the posting policy of any is
// manual, the grade waits for a post (Record.Posted false).
func (s *Store) Create(ctx context.Context, student facade.StudentID, subject string, grade Grade, by string, classes []facade.ClassID) (Record, error) {
	rec, status, err := s.apply(ctx, opCreate, student, subject, grade, by, nil, classes)
	if err == nil && status == "exists" {
		err = facade.ErrGradeExists
	}
	return rec, err
}

// Update replaces an existing grade and increments its version. It is
// ErrNotFound when there is none, and ErrVersionMismatch when ifMatch is not nil and
// differs from the current version (then nothing is written). Setting the
// grade already stored changes nothing: the current record comes back with
// its version, and no audit entry is added. classes decide the posting
// as for Create.
func (s *Store) Update(ctx context.Context, student facade.StudentID, subject string, grade Grade, by string, ifMatch *int64, classes []facade.ClassID) (Record, error) {
	rec, status, err := s.apply(ctx, opUpdate, student, subject, grade, by, ifMatch, classes)
	switch {
	case err != nil:
	case status == "absent":
		err = facade.ErrNotFound
	case status == "stale":
		err = facade.ErrVersionMismatch
	}
	return rec, err
}

// Seed creates the grade by SeedActor when the student has none and reports
// whether it did. An existing grade is never overwritten, so restarting with
// the same seed file keeps what users changed since. A seeded grade is
// posted: a seed file holds grades as they stand.
func (s *Store) Seed(ctx context.Context, student facade.StudentID, subject string, grade Grade) (created bool, err error) {
	_, status, err := s.apply(ctx, opSeed, student, subject, grade, SeedActor, nil, nil)
	return err == nil && status == "ok", err
}

// apply checks a change, runs changeScript and, when it wrote, logs the
// audit line and returns the new record. status is the script's verdict.
// The change is posted as it is made unless a class of the student's has
// the manual policy (held); a held change is posted after all when the
// policy turned automatic meanwhile (settle).
func (s *Store) apply(ctx context.Context, op string, student facade.StudentID, subject string, grade Grade, by string, ifMatch *int64, classes []facade.ClassID) (Record, string, error) {
	if err := checkChange(subject, by); err != nil {
		return Record{}, "", err
	}
	hold, err := s.policies.holds(ctx, classes)
	if err != nil {
		return Record{}, "", err
	}
	at := s.now().UTC().Truncate(time.Second)
	keys, args := changeCall(op, student.String(), subject, grade.String(), by, at, ifMatch, hold)
	res, err := changeScript.Run(ctx, s.rdb, keys, args...).Slice()
	if err != nil {
		return Record{}, "", redisdb.Error(err)
	}
	rec, status, err := s.changed(ctx, op, student.String(), subject, grade.String(), by, at, res, hold)
	if err != nil || status != "ok" || !hold {
		return rec, status, err
	}
	rec, err = s.settle(ctx, rec, classes)
	return rec, status, err
}

// checkChange runs the checks a change needs before it reaches Redis: the
// student and the grade arrive parsed; the subject and the actor do not.
func checkChange(subject, by string) error {
	if err := CheckSubject(subject); err != nil {
		return err
	}
	if by == "" { // the caller lost the principal: refuse an anonymous change
		return facade.Wrap(facade.ErrInternal, errors.New("grades: change without an actor"))
	}
	return nil
}

// changeCall returns changeScript's keys and arguments for one change.
func changeCall(op, studentID, subject, grade, by string, at time.Time, ifMatch *int64, hold bool) ([]string, []any) {
	required := ""
	if ifMatch != nil {
		required = strconv.FormatInt(*ifMatch, 10)
	}
	post := "1"
	if hold {
		post = "0"
	}
	keys := []string{recordKey(studentID, subject), auditKey(studentID, subject)}
	return keys, []any{op, grade, by, at.Format(time.RFC3339), required, AuditRetention, post}
}

// changed reads changeScript's reply res and, when it wrote, logs the
// audit line and returns the new record.
// hold says whether the change waits for a post.
func (s *Store) changed(ctx context.Context, op, studentID, subject, grade, by string, at time.Time, res []any, hold bool) (Record, string, error) {
	if len(res) > 0 && res[0] == "same" {
		rec, err := parseUnchanged(studentID, subject, grade, res)
		return rec, "same", err
	}
	status, version, old, err := parseScriptResult(res)
	if err != nil || status != "ok" {
		return Record{}, status, err
	}
	s.log.LogAttrs(ctx, slog.LevelInfo, "grade changed",
		slog.Bool("audit", true), slog.String("op", op), slog.String("who", by),
		slog.String("student", studentID), slog.String("subject", subject),
		slog.String("old", old), slog.String("new", grade), slog.Int64("version", version), slog.Bool("posted", !hold))
	rec := Record{StudentID: studentID, Subject: subject, Grade: grade, UpdatedAt: at, UpdatedBy: by, Version: version, Posted: !hold}
	return rec, status, nil
}

// CheckSubject checks a subject the way the store does before it becomes
// part of a key (seeding checks a whole file first).
func CheckSubject(subject string) error {
	if !subjectPattern.MatchString(subject) {
		return facade.ErrBadIdentifier
	}
	return nil
}

func corrupt(format string, args ...any) error {
	return facade.Wrap(facade.ErrInternal, fmt.Errorf("grades: "+format, args...))
}

func parseScriptResult(res []any) (status string, version int64, old string, err error) {
	if len(res) == 0 {
		return "", 0, "", corrupt("empty script reply")
	}
	status, _ = res[0].(string)
	if status != "ok" {
		return status, 0, "", nil
	}
	if len(res) != 3 {
		return "", 0, "", corrupt("script reply %v", res)
	}
	version, okV := res[1].(int64)
	old, okO := res[2].(string)
	if !okV || !okO {
		return "", 0, "", corrupt("script reply %v", res)
	}
	return status, version, old, nil
}

// parseUnchanged reads the script's {"same", version, updated_at,
// updated_by, posted} reply into the record as it stands (Released is
// not read: a writer needs Posted only).
func parseUnchanged(studentID, subject, grade string, res []any) (Record, error) {
	if len(res) < 4 || len(res) > 5 {
		return Record{}, corrupt("script reply %v", res)
	}
	f := map[string]string{"grade": grade}
	for i, k := range []string{"version", "updated_at", "updated_by", "posted"} {
		if i+1 >= len(res) {
			break
		}
		if v, ok := res[i+1].(string); ok {
			f[k] = v
		}
	}
	rec, ok := recordOf(studentID, subject, f["grade"], f["updated_at"], f["updated_by"], f["version"])
	if !ok {
		return Record{}, corrupt("script reply %v", res)
	}
	posted, has := f["posted"]
	rec.Posted = !has || posted == f["version"]
	return rec, nil
}

// parseStored reads a grade's hash: the current record and, when a
// version was posted, the released one (the record itself when it is the
// posted version). A hash without the posted field was written before
// posting existed, when every grade was its student's as it stood.
func parseStored(studentID, subject string, f map[string]string) (Record, *Record, error) {
	rec, ok := recordOf(studentID, subject, f["grade"], f["updated_at"], f["updated_by"], f["version"])
	posted, hasPosted := f["posted"]
	if !ok || hasPosted && !canonicalDigits(posted) {
		return Record{}, nil, corrupt("record %s/%s: %v", studentID, subject, f)
	}
	switch {
	case !hasPosted || posted == f["version"]:
		rec.Posted = true
		released := rec
		return rec, &released, nil
	case posted != "0":
		released, ok := recordOf(studentID, subject, f["posted_grade"], f["posted_updated_at"], f["posted_updated_by"], posted)
		if !ok {
			return Record{}, nil, corrupt("record %s/%s: %v", studentID, subject, f)
		}
		released.Posted = true
		return rec, &released, nil
	}
	return rec, nil, nil
}

// recordOf makes a Record of a hash's fields; false when one is corrupt.
func recordOf(studentID, subject, grade, updatedAt, updatedBy, version string) (Record, bool) {
	at, errT := time.Parse(time.RFC3339, updatedAt)
	v, errV := strconv.ParseInt(version, 10, 64)
	if errT != nil || errV != nil || grade == "" {
		return Record{}, false
	}
	return Record{StudentID: studentID, Subject: subject, Grade: grade,
		UpdatedAt: at.UTC(), UpdatedBy: updatedBy, Version: v}, true
}
