package accounts

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/facade-dev/facade/redisdb"
)

// Statements across upgrades (docs/operations.md, "Upgrading").
//
// An account's statement lines have been kept three ways: a list
// (statementKey: transfer ids, newest first, read with LRANGE offsets),
// then a sorted set (historyKey: transfer ids scored by their time in µs,
// made strictly increasing per account), now a stream (linesKey,
// lines.go). A page reads the stream and the sorted set in one round trip
// and merges them by position, so a history that began in the sorted set
// reads as one: nothing is moved at an upgrade, nothing is lost or shown
// twice. A list is moved into the sorted set the first time its statement
// is read (migrateScript, below), its transfers keeping their times as
// scores, older than any line written since.
//
// Instances of the build before the stream (f980b4f) read and write the
// sorted set only. While they run beside this build on one Redis, during
// a rolling upgrade, the transfer script keeps writing the sorted set, so
// their statements miss nothing that this build's instances applied;
// once the format key (formatKey) holds "stream", set by the operator when
// no instance of that build is left, it writes the stream only, and the
// sorted set is read-only from then on. A store that has never applied a
// transfer (no ledger) has no history that build could read, and the
// first transfer sets the key itself (transfer.lua). Cursors of the
// sorted set are sealed in that build's form (SealStatementCursor), so
// during a rollout a page's next link opens on either build.

// migrateScript moves a statement list into the sorted set.
// KEYS[1] the list, KEYS[2] the history; ARGV[1] the transfer record
// keys' prefix (the records share the {money} slot: keys.go).
// Returns how many transfers it moved.
var migrateScript = redis.NewScript(`
local ids = redis.call('LRANGE', KEYS[1], 0, -1)
local prev, args = 0, {}
local function flush()
  if #args > 0 then redis.call('ZADD', KEYS[2], unpack(args)) end
  args = {}
end
for i = #ids, 1, -1 do
  local score = tonumber(redis.call('HGET', ARGV[1] .. ids[i], 'created')) or 0
  if score <= prev then score = prev + 1 end
  prev = score
  args[#args + 1] = string.format('%.0f', score)
  args[#args + 1] = ids[i]
  if #args >= 1000 then flush() end
end
flush()
redis.call('DEL', KEYS[1])
return #ids
`)

// migrateStatement moves account id's statement list, if it still has
// one, into its history.
func (s *Store) migrateStatement(ctx context.Context, id string) error {
	err := migrateScript.Run(ctx, s.rdb, []string{statementKey(id), historyKey(id)}, transferKey("")).Err()
	return redisdb.Error(err)
}
