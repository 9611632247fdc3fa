package grades

import "github.com/redis/go-redis/v9"

// changeScript applies one change to a grade atomically: nothing else runs in
// Redis between the existence/version check and the two writes, so 50
// concurrent writers holding the same If-Match see exactly one winner, and a
// refused change writes nothing.
//
// KEYS: the record hash and the audit stream (same hash slot, see keys.go).
// ARGV, in order:
//   - op: "create" and "seed" refuse an existing record, "update" an absent one
//   - the new grade, the actor, the timestamp (RFC 3339, taken in Go)
//   - the required current version as decimal text, "" for none
//   - the approximate audit stream length to keep
//   - "1" when the change is posted as it is made (the automatic posting
//     policy: the released fields take the new record), "0" when it waits
//     for a post (manual: the released fields keep what the student saw)
//
// Returns {"ok", version, old grade} | {"exists"} | {"absent"} | {"stale"} |
// {"same", version, updated_at, updated_by[, posted]}: an update to the grade already
// stored writes nothing (no new version, no audit entry) and answers the
// record as it stands.
// Versions are compared as text: both sides are canonical decimals (ETag and
// HINCRBY write them so), so the check never goes through Lua's float numbers.
//
// The hash holds the released record (what its student reads) only
// while it differs from the current one: with no "posted" field the
// current record is its student's (as every record written before posting
// existed is), so a grade of an automatic class is the same four fields
// it always was and a student's read costs what it did. A held change
// first copies the record its student sees into "posted" (its version,
// "0" for none) and the posted_* fields, unless a copy is already kept.
var changeScript = redis.NewScript(`
local exists = redis.call('EXISTS', KEYS[1]) == 1
local op = ARGV[1]
if op == 'update' then
  if not exists then return {'absent'} end
  if ARGV[5] ~= '' and ARGV[5] ~= redis.call('HGET', KEYS[1], 'version') then
    return {'stale'}
  end
  local cur = redis.call('HMGET', KEYS[1], 'grade', 'version', 'updated_at', 'updated_by', 'posted')
  if cur[1] == ARGV[2] then
    return {'same', cur[2], cur[3], cur[4], cur[5]}
  end
elseif exists then
  return {'exists'}
end
local old = ''
local version = 1
if exists then
  local cur = redis.call('HMGET', KEYS[1], 'grade', 'version', 'updated_at', 'updated_by', 'posted')
  old = cur[1] or ''
  if ARGV[7] ~= '1' and (not cur[5] or cur[5] == cur[2]) then
    redis.call('HSET', KEYS[1], 'posted', cur[2], 'posted_grade', old, 'posted_updated_at', cur[3],
      'posted_updated_by', cur[4])
  end
  version = redis.call('HINCRBY', KEYS[1], 'version', 1)
  redis.call('HSET', KEYS[1], 'grade', ARGV[2], 'updated_at', ARGV[4], 'updated_by', ARGV[3])
else
  redis.call('HSET', KEYS[1], 'grade', ARGV[2], 'updated_at', ARGV[4], 'updated_by', ARGV[3], 'version', '1')
  if ARGV[7] ~= '1' then redis.call('HSET', KEYS[1], 'posted', '0') end
end
if ARGV[7] == '1' then
  redis.call('HDEL', KEYS[1], 'posted', 'posted_grade', 'posted_updated_at', 'posted_updated_by')
end
redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[6], '*',
  'by', ARGV[3], 'at', ARGV[4], 'old', old, 'new', ARGV[2], 'version', version, 'posted', ARGV[7])
return {'ok', version, old}
`)

// postScript posts one grade atomically: the copy of the released record
// goes (the current record is its student's again) and the audit stream
// records who posted which version when, in one step, so a student
// reading at any instant sees either the grade as last posted or the new
// one, never a mix.
//
// KEYS: the record hash and the audit stream. ARGV: the poster, the
// timestamp (RFC 3339), the approximate audit stream length to keep.
//
// Returns {"ok", version} | {"absent"} (no grade) | {"posted"} (the
// current version is already its student's: nothing written).
var postScript = redis.NewScript(`
local cur = redis.call('HMGET', KEYS[1], 'grade', 'version', 'posted')
if not cur[1] then return {'absent'} end
if not cur[3] or cur[3] == cur[2] then return {'posted'} end
redis.call('HDEL', KEYS[1], 'posted', 'posted_grade', 'posted_updated_at', 'posted_updated_by')
redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[3], '*',
  'op', 'post', 'by', ARGV[1], 'at', ARGV[2], 'new', cur[1], 'version', cur[2])
return {'ok', cur[2]}
`)
