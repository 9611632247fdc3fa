package accounts

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/facade-dev/facade/redisdb"
)

// Statements were once a list per account (statementKey: transfer ids,
// newest first), read with LRANGE offsets: a page near the first transfer
// cost Redis a walk through the list. They are now a sorted set
// (historyKey, statement.go). An account's list is moved into its history
// the first time its statement is read (Statement notices the list in the
// same round trip), in one script, so nothing needs to run at an upgrade
// and no transfer is lost or shown twice: transfers made since the
// upgrade are in the history already, and the moved ones keep their
// times as scores, older than those.
//
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
