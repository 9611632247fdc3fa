package grades

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/redisdb"
)

// RowResult is what applying one gradebook row did, with the record as
// it now stands (zero Version: the student has no grade).
type RowResult struct {
	Outcome Outcome
	Record  Record
}

// applyBatch is how many changes one pipeline carries: a 5,000-row
// gradebook is ten round trips, not 5,000, and no reply grows past a few
// hundred kilobytes.
const applyBatch = 500

// ApplyRows writes rows Decide found Changed, each with its version as
// If-Match (none: the grade is created), in pipelines of applyBatch
// changes. Each change is still its own atomic script: a change someone
// made in between makes that row Stale, with the record as it now stands
// (read for all such rows in one more round trip).
//
// Rows are as ReadGradebook parsed them: one with a Problem, or without a
// grade, is not a change and is refused whole (ErrBadIdentifier, NotOnScale).
// classesOf names each student's classes: a change waits for a post when
// one of them has the manual posting policy (see Create).
func (s *Store) ApplyRows(ctx context.Context, rows []GradebookRow, subject, by string, classesOf func(facade.StudentID) []facade.ClassID) ([]RowResult, error) {
	if err := checkChange(subject, by); err != nil {
		return nil, err
	}
	for _, r := range rows {
		switch {
		case r.student.IsZero():
			return nil, facade.ErrBadIdentifier
		case r.grade.IsZero():
			return nil, NotOnScale
		}
	}
	out := make([]RowResult, len(rows))
	if len(rows) == 0 {
		return out, nil
	}
	// Loaded once (on every shard of a cluster), so the pipelines' EVALSHA
	// find it; a flush in between is caught row by row (applyPipeline).
	if err := changeScript.Load(ctx, s.rdb).Err(); err != nil {
		return nil, redisdb.Error(err)
	}
	students := make([]facade.StudentID, len(rows))
	for i, r := range rows {
		students[i] = r.student
	}
	manual, err := s.policies.manual(ctx, distinctClasses(students, classesOf))
	if err != nil {
		return nil, err
	}
	hold := func(r GradebookRow) bool { return anyManual(manual, classesOf(r.student)) }
	var stale []int
	for lo := 0; lo < len(rows); lo += applyBatch {
		hi := min(lo+applyBatch, len(rows))
		st, err := s.applyPipeline(ctx, rows[lo:hi], subject, by, hold, out[lo:hi])
		if err != nil {
			return nil, err
		}
		for _, i := range st {
			stale = append(stale, lo+i)
		}
	}
	if err := settleRows(ctx, s, rows, out, subject, by, classesOf); err != nil {
		return nil, err
	}
	return out, s.readStale(ctx, rows, subject, stale, out)
}

// applyPipeline runs one batch's changes in one round trip and fills out;
// it returns the indexes of rows found stale.
func (s *Store) applyPipeline(ctx context.Context, rows []GradebookRow, subject, by string, hold func(GradebookRow) bool, out []RowResult) ([]int, error) {
	at := s.now().UTC().Truncate(time.Second)
	cmds := make([]*redis.Cmd, len(rows))
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, r := range rows {
			keys, args := changeCall(rowOp(r), r.student.String(), subject, r.grade.String(), by, at, r.Version, hold(r))
			cmds[i] = p.EvalSha(ctx, changeScript.Hash(), keys, args...)
		}
		return nil
	})
	if err != nil && !redis.HasErrorPrefix(err, "NOSCRIPT") {
		return nil, redisdb.Error(err)
	}
	var stale []int
	for i, r := range rows {
		res, err := cmds[i].Slice()
		if redis.HasErrorPrefix(err, "NOSCRIPT") { // the script cache was flushed: Run loads it
			keys, args := changeCall(rowOp(r), r.student.String(), subject, r.grade.String(), by, at, r.Version, hold(r))
			res, err = changeScript.Run(ctx, s.rdb, keys, args...).Slice()
		}
		if err != nil {
			return nil, redisdb.Error(err)
		}
		rec, status, err := s.changed(ctx, rowOp(r), r.student.String(), subject, r.grade.String(), by, at, res, hold(r))
		switch {
		case err != nil:
			return nil, err
		case status == "exists" || status == "absent" || status == "stale":
			stale = append(stale, i)
		case r.Version != nil && rec.Version == *r.Version:
			out[i] = RowResult{Unchanged, rec} // the grade was set to this value in between
		default:
			out[i] = RowResult{Changed, rec}
		}
	}
	return stale, nil
}

// readStale fills the rows someone changed in between with the records as
// they now stand, in one round trip.
func (s *Store) readStale(ctx context.Context, rows []GradebookRow, subject string, stale []int, out []RowResult) error {
	if len(stale) == 0 {
		return nil
	}
	ids := make([]facade.StudentID, len(stale))
	for j, i := range stale {
		ids[j] = rows[i].student
	}
	recs, err := s.GetMany(ctx, ids, subject)
	if err != nil {
		return err
	}
	for _, i := range stale {
		out[i] = RowResult{Stale, recs[rows[i].student]}
		if out[i].Record.Grade == rows[i].Grade { // set to the file's grade in between
			out[i].Outcome = Unchanged
		}
	}
	return nil
}

// rowOp is the change a row asks for: without a version the student had
// no grade, so it is created; with one it is updated at that version.
func rowOp(r GradebookRow) string {
	if r.Version == nil {
		return opCreate
	}
	return opUpdate
}
