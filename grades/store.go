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
	rdb   redis.UniversalClient
	reads *redisdb.Batcher // concurrent grade reads share pipelines (redisdb.Batcher says why)
	log   *slog.Logger
	now   func() time.Time // Config.Now
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
	s := &Store{rdb: rdb, reads: redisdb.NewBatcher(rdb, readPipelines), log: cfg.Log, now: cfg.Now}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s
}

// Get returns the current grade, or ErrNotFound.
func (s *Store) Get(ctx context.Context, student facade.StudentID, subject string) (Record, error) {
	if err := CheckSubject(subject); err != nil {
		return Record{}, err
	}
	studentID := student.String()
	var cmd *redis.MapStringStringCmd
	s.reads.Do(ctx, func(p redis.Pipeliner) { cmd = p.HGetAll(ctx, recordKey(studentID, subject)) })
	fields, err := cmd.Result()
	if err != nil {
		return Record{}, redisdb.Error(err)
	}
	if len(fields) == 0 {
		return Record{}, facade.ErrNotFound
	}
	return parseRecord(studentID, subject, fields)
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
		rec, err := parseRecord(id.String(), subject, fields)
		if err != nil {
			return nil, err
		}
		out[id] = rec
	}
	return out, nil
}

// Create stores a new grade at version 1. It is ErrGradeExists when the student
// already has a grade in subject, whatever its value.
func (s *Store) Create(ctx context.Context, student facade.StudentID, subject string, grade Grade, by string) (Record, error) {
	rec, status, err := s.apply(ctx, opCreate, student, subject, grade, by, nil)
	if err == nil && status == "exists" {
		err = facade.ErrGradeExists
	}
	return rec, err
}

// Update replaces an existing grade and increments its version. It is
// ErrNotFound when there is none, and ErrVersionMismatch when ifMatch is not nil and
// differs from the current version (then nothing is written). Setting the
// grade already stored changes nothing: the current record comes back with
// its version, and no audit entry is added.
func (s *Store) Update(ctx context.Context, student facade.StudentID, subject string, grade Grade, by string, ifMatch *int64) (Record, error) {
	rec, status, err := s.apply(ctx, opUpdate, student, subject, grade, by, ifMatch)
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
// the same seed file keeps what users changed since.
func (s *Store) Seed(ctx context.Context, student facade.StudentID, subject string, grade Grade) (created bool, err error) {
	_, status, err := s.apply(ctx, opSeed, student, subject, grade, SeedActor, nil)
	return err == nil && status == "ok", err
}

// Audit returns up to limit changes to one grade, newest first. limit <= 0 or
// above AuditRetention means AuditRetention. A grade that never existed has
// an empty trail (not an error).
func (s *Store) Audit(ctx context.Context, student facade.StudentID, subject string, limit int) ([]AuditEntry, error) {
	if err := CheckSubject(subject); err != nil {
		return nil, err
	}
	studentID := student.String()
	if limit <= 0 || limit > AuditRetention {
		limit = AuditRetention
	}
	msgs, err := s.rdb.XRevRangeN(ctx, auditKey(studentID, subject), "+", "-", int64(limit)).Result()
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

// apply checks a change, runs changeScript and, when it wrote, logs the
// audit line and returns the new record. status is the script's verdict.
func (s *Store) apply(ctx context.Context, op string, student facade.StudentID, subject string, grade Grade, by string, ifMatch *int64) (Record, string, error) {
	if err := checkChange(subject, by); err != nil {
		return Record{}, "", err
	}
	at := s.now().UTC().Truncate(time.Second)
	keys, args := changeCall(op, student.String(), subject, grade.String(), by, at, ifMatch)
	res, err := changeScript.Run(ctx, s.rdb, keys, args...).Slice()
	if err != nil {
		return Record{}, "", redisdb.Error(err)
	}
	return s.changed(ctx, op, student.String(), subject, grade.String(), by, at, res)
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
func changeCall(op, studentID, subject, grade, by string, at time.Time, ifMatch *int64) ([]string, []any) {
	required := ""
	if ifMatch != nil {
		required = strconv.FormatInt(*ifMatch, 10)
	}
	keys := []string{recordKey(studentID, subject), auditKey(studentID, subject)}
	return keys, []any{op, grade, by, at.Format(time.RFC3339), required, AuditRetention}
}

// changed reads changeScript's reply res and, when it wrote, logs the
// audit line and returns the new record.
func (s *Store) changed(ctx context.Context, op, studentID, subject, grade, by string, at time.Time, res []any) (Record, string, error) {
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
		slog.String("old", old), slog.String("new", grade), slog.Int64("version", version))
	rec := Record{StudentID: studentID, Subject: subject, Grade: grade, UpdatedAt: at, UpdatedBy: by, Version: version}
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
// updated_by} reply into the record as it stands.
func parseUnchanged(studentID, subject, grade string, res []any) (Record, error) {
	if len(res) != 4 {
		return Record{}, corrupt("script reply %v", res)
	}
	f := map[string]string{"grade": grade}
	for i, k := range []string{"version", "updated_at", "updated_by"} {
		v, _ := res[i+1].(string)
		f[k] = v
	}
	return parseRecord(studentID, subject, f)
}

func parseRecord(studentID, subject string, f map[string]string) (Record, error) {
	at, errT := time.Parse(time.RFC3339, f["updated_at"])
	version, errV := strconv.ParseInt(f["version"], 10, 64)
	if errT != nil || errV != nil || f["grade"] == "" {
		return Record{}, corrupt("record %s/%s: %v", studentID, subject, f)
	}
	return Record{StudentID: studentID, Subject: subject, Grade: f["grade"],
		UpdatedAt: at.UTC(), UpdatedBy: f["updated_by"], Version: version}, nil
}

func parseAuditEntry(studentID, subject string, v map[string]any) (AuditEntry, error) {
	text := func(k string) string { s, _ := v[k].(string); return s }
	at, errT := time.Parse(time.RFC3339, text("at"))
	version, errV := strconv.ParseInt(text("version"), 10, 64)
	if errT != nil || errV != nil {
		return AuditEntry{}, corrupt("audit entry %s/%s: %v", studentID, subject, v)
	}
	return AuditEntry{StudentID: studentID, Subject: subject, By: text("by"), At: at.UTC(),
		Old: text("old"), New: text("new"), Version: version}, nil
}
