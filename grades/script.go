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
//
// Returns {"ok", version, old grade} | {"exists"} | {"absent"} | {"stale"} |
// {"same", version, updated_at, updated_by}: an update to the grade already
// stored writes nothing (no new version, no audit entry) and answers the
// record as it stands.
// Versions are compared as text: both sides are canonical decimals (ETag and
// HINCRBY write them so), so the check never goes through Lua's float numbers.
var changeScript = redis.NewScript(`
local exists = redis.call('EXISTS', KEYS[1]) == 1
local op = ARGV[1]
if op == 'update' then
  if not exists then return {'absent'} end
  if ARGV[5] ~= '' and ARGV[5] ~= redis.call('HGET', KEYS[1], 'version') then
    return {'stale'}
  end
  local cur = redis.call('HMGET', KEYS[1], 'grade', 'version', 'updated_at', 'updated_by')
  if cur[1] == ARGV[2] then
    return {'same', cur[2], cur[3], cur[4]}
  end
elseif exists then
  return {'exists'}
end
local old = ''
local version = 1
if exists then
  old = redis.call('HGET', KEYS[1], 'grade') or ''
  version = redis.call('HINCRBY', KEYS[1], 'version', 1)
  redis.call('HSET', KEYS[1], 'grade', ARGV[2], 'updated_at', ARGV[4], 'updated_by', ARGV[3])
else
  redis.call('HSET', KEYS[1], 'grade', ARGV[2], 'updated_at', ARGV[4], 'updated_by', ARGV[3], 'version', '1')
end
redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[6], '*',
  'by', ARGV[3], 'at', ARGV[4], 'old', old, 'new', ARGV[2], 'version', version)
return {'ok', version, old}
`)
