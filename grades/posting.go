package grades

import (
	"context"
	"log/slog"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/redisdb"
)

// Posting (docs/contract.md §4, "When students see a grade"): each class
// has a policy, automatic (the default: a change is its student's at
// once) or manual (a change waits until someone posts it). A grade's hash
// keeps, beside the current record, a copy of the record its student sees
// while the two differ (script.go): a student reads that copy, or the
// current record when there is none, staff the current one; so a
// student's read is the same one command whatever the policy, a grade of
// an automatic class is the four fields it always was, and nothing a
// student can ask for moves while a change waits. A change is posted as
// it is made (changeScript's post argument) unless a class of the
// student's is manual; a post (postScript) drops the copy and appends the
// posting to the grade's audit stream, one script per grade. Nothing is
// kept in a process: every instance reads the same keys.

// Policy is a class's posting policy.
type Policy string

// The posting policies.
const (
	Automatic Policy = "automatic" // a change is its student's as it is made
	Manual    Policy = "manual"    // a change waits for a post
)

// ParsePolicy returns s as a Policy when it names one.
func ParsePolicy(s string) (Policy, error) {
	switch p := Policy(s); p {
	case Automatic, Manual:
		return p, nil
	}
	return "", facade.Refuse(facade.ErrBadParameter, "policy", facade.ReasonMalformed)
}

// PolicyOf returns class's posting policy.
func (s *Store) PolicyOf(ctx context.Context, class facade.ClassID) (Policy, error) {
	v, err := s.rdb.HGet(ctx, postingKey, class.String()).Result()
	switch {
	case err == redis.Nil:
		return Automatic, nil
	case err != nil:
		return "", redisdb.Error(err)
	case v == string(Manual):
		return Manual, nil
	}
	return Automatic, nil
}

// SetPolicy sets class's posting policy. Turning it automatic posts every
// unposted grade of students, the class's students, by by, and returns
// how many; turning it manual posts nothing. The policy is written first,
// so a change made meanwhile is posted either by this call or, seeing the
// new policy, by its own writer (settle): none stays unposted under an
// automatic policy.
func (s *Store) SetPolicy(ctx context.Context, class facade.ClassID, p Policy, students []facade.StudentID, subject, by string) (PostResult, error) {
	if err := checkChange(subject, by); err != nil {
		return PostResult{}, err
	}
	var err error
	if p == Manual {
		err = s.rdb.HSet(ctx, postingKey, class.String(), string(Manual)).Err()
	} else {
		err = s.rdb.HDel(ctx, postingKey, class.String()).Err()
	}
	if err != nil {
		return PostResult{}, redisdb.Error(err)
	}
	s.log.LogAttrs(ctx, slog.LevelInfo, "posting policy set", slog.Bool("audit", true),
		slog.String("who", by), slog.String("class", class.String()), slog.String("policy", string(p)))
	if p == Manual {
		return PostResult{PostedAt: s.now().UTC().Truncate(time.Second), PostedBy: by}, nil
	}
	return s.Post(ctx, students, subject, by)
}

// policies reads the classes' posting policies (postingKey).
type policies struct{ rdb redis.UniversalClient }

// holds reports whether a change to a grade of a student enrolled in
// classes waits for a post: when any of them is manual. No class: the
// default, automatic.
func (p policies) holds(ctx context.Context, classes []facade.ClassID) (bool, error) {
	manual, err := p.manual(ctx, classes)
	return err == nil && anyManual(manual, classes), err
}

// missing is a student's answer for a grade that is not there: as for
// one that waits (ErrGradeNotPosted) once a class of theirs is manual,
// ErrNotFound while none is.
func (p policies) missing(ctx context.Context, classes []facade.ClassID) error {
	hold, err := p.holds(ctx, classes)
	switch {
	case err != nil:
		return err
	case hold:
		return facade.ErrGradeNotPosted
	}
	return facade.ErrNotFound
}

// manual returns which of classes have the manual policy, in one command.
func (p policies) manual(ctx context.Context, classes []facade.ClassID) (map[facade.ClassID]bool, error) {
	if len(classes) == 0 {
		return nil, nil
	}
	fields := make([]string, len(classes))
	for i, c := range classes {
		fields[i] = c.String()
	}
	vals, err := p.rdb.HMGet(ctx, postingKey, fields...).Result()
	if err != nil {
		return nil, redisdb.Error(err)
	}
	out := map[facade.ClassID]bool{}
	for i, v := range vals {
		if v == string(Manual) {
			out[classes[i]] = true
		}
	}
	return out, nil
}

func anyManual(manual map[facade.ClassID]bool, classes []facade.ClassID) bool {
	for _, c := range classes {
		if manual[c] {
			return true
		}
	}
	return false
}

// distinctClasses lists the classes of every student, once each.
func distinctClasses(students []facade.StudentID, classesOf func(facade.StudentID) []facade.ClassID) []facade.ClassID {
	seen := map[facade.ClassID]bool{}
	var out []facade.ClassID
	for _, id := range students {
		for _, c := range classesOf(id) {
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
			}
		}
	}
	return out
}

// settleRows posts the rows ApplyRows held whose classes are none of them
// manual now (settle, for a whole upload: one read of the policies, one
// post).
func settleRows(ctx context.Context, s *Store, rows []GradebookRow, out []RowResult, subject, by string, classesOf func(facade.StudentID) []facade.ClassID) error {
	var held []facade.StudentID
	var at []int
	for i, r := range rows {
		if out[i].Outcome == Changed && !out[i].Record.Posted {
			held, at = append(held, r.student), append(at, i)
		}
	}
	if len(held) == 0 {
		return nil
	}
	manual, err := s.policies.manual(ctx, distinctClasses(held, classesOf))
	if err != nil {
		return err
	}
	var post []facade.StudentID
	var posted []int
	for j, id := range held {
		if !anyManual(manual, classesOf(id)) {
			post, posted = append(post, id), append(posted, at[j])
		}
	}
	if _, err := s.Post(ctx, post, subject, by); err != nil {
		return err
	}
	for _, i := range posted {
		out[i].Record.Posted = true
	}
	return nil
}

// settle posts a change that was held when its classes' policies were
// read, if none of them is manual now: SetPolicy writes the policy before
// it posts, so a change it did not see is posted here.
func (s *Store) settle(ctx context.Context, rec Record, classes []facade.ClassID) (Record, error) {
	hold, err := s.policies.holds(ctx, classes)
	if err != nil || hold {
		return rec, err
	}
	student, err := facade.ParseStudentID(rec.StudentID)
	if err != nil {
		return rec, err
	}
	res, err := s.Post(ctx, []facade.StudentID{student}, rec.Subject, rec.UpdatedBy)
	if err == nil && res.Posted == 1 {
		rec.Posted = true
	}
	return rec, err
}

// PostResult is what a post did: how many grades it released, when and by
// whom.
type PostResult struct {
	Posted   int       `json:"posted"`
	PostedAt time.Time `json:"posted_at"`
	PostedBy string    `json:"posted_by"`
}

// postBatch is how many grades one pipeline posts: 5,000 students are ten
// round trips.
const postBatch = 500

// Post releases the current version of each student's grade to its
// student, where it is not released yet; students without a grade, or
// whose grade is already posted, are passed over. Each grade is posted by
// its own script (postScript), atomically; the scripts go in pipelines
// of postBatch.
func (s *Store) Post(ctx context.Context, students []facade.StudentID, subject, by string) (PostResult, error) {
	if err := checkChange(subject, by); err != nil {
		return PostResult{}, err
	}
	at := s.now().UTC().Truncate(time.Second)
	out := PostResult{PostedAt: at, PostedBy: by}
	if len(students) == 0 {
		return out, nil
	}
	if err := postScript.Load(ctx, s.rdb).Err(); err != nil {
		return PostResult{}, redisdb.Error(err)
	}
	args := []any{by, at.Format(time.RFC3339), AuditRetention}
	for lo := 0; lo < len(students); lo += postBatch {
		batch := students[lo:min(lo+postBatch, len(students))]
		cmds := make([]*redis.Cmd, len(batch))
		_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, id := range batch {
				cmds[i] = p.EvalSha(ctx, postScript.Hash(), postKeys(id, subject), args...)
			}
			return nil
		})
		if err != nil && !redis.HasErrorPrefix(err, "NOSCRIPT") {
			return PostResult{}, redisdb.Error(err)
		}
		for i, id := range batch {
			res, err := cmds[i].Slice()
			if redis.HasErrorPrefix(err, "NOSCRIPT") { // the script cache was flushed: Run loads it
				res, err = postScript.Run(ctx, s.rdb, postKeys(id, subject), args...).Slice()
			}
			if err != nil {
				return PostResult{}, redisdb.Error(err)
			}
			if len(res) == 2 && res[0] == "ok" {
				out.Posted++
				version, _ := res[1].(string)
				s.log.LogAttrs(ctx, slog.LevelInfo, "grade posted", slog.Bool("audit", true),
					slog.String("who", by), slog.String("student", id.String()), slog.String("subject", subject),
					slog.String("version", version))
			}
		}
	}
	return out, nil
}

func postKeys(id facade.StudentID, subject string) []string {
	return []string{recordKey(id.String(), subject), auditKey(id.String(), subject)}
}

// Unposted counts the students whose grade has a version not posted yet,
// reading two fields of each in one round trip.
func (s *Store) Unposted(ctx context.Context, students []facade.StudentID, subject string) (int, error) {
	if err := CheckSubject(subject); err != nil {
		return 0, err
	}
	cmds := make([]*redis.SliceCmd, len(students))
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range students {
			cmds[i] = p.HMGet(ctx, recordKey(id.String(), subject), "version", "posted")
		}
		return nil
	})
	if err != nil {
		return 0, redisdb.Error(err)
	}
	n := 0
	for _, c := range cmds {
		v := c.Val()
		version, _ := v[0].(string)
		posted, has := v[1].(string)
		if version != "" && has && posted != version {
			n++
		}
	}
	return n, nil
}

// StaffETag is the entity tag of a record as staff read it: ETag(Version)
// when the version is posted, `"3-unposted"` while it waits, so a post
// (which changes what staff read, not the version) changes the tag too.
// ParseIfMatch reads either as the version.
func StaffETag(rec Record) string {
	if rec.Posted {
		return ETag(rec.Version)
	}
	return `"` + strconv.FormatInt(rec.Version, 10) + unpostedSuffix + `"`
}

const unpostedSuffix = "-unposted"
