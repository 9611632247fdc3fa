package accounts

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
)

// Redis keys of the accounts package. Every key carries the same hash tag,
// {money}, so in Redis Cluster they all live in ONE hash slot.
//
// Why one slot: a transfer is one Lua script that reads and writes both
// accounts, the ledger, both statements, the transfer record and the
// idempotency record. Redis runs a script atomically only when every key it
// touches is in one slot (others fail with CROSSSLOT), and any two accounts
// may meet in a transfer, so all accounts must share the slot.
//
// The trade-off: all money sits on one shard (and its replicas). Cluster
// still spreads the other packages' keys (cache, rate limits, grades), but
// the money domain scales vertically only: one Redis core runs every
// transfer (docs/performance.md says how many). Sharding accounts across
// slots would need a two-phase protocol (reserve on the source, saga to
// the destination) and give up the single atomic step docs/contract.md §5
// asks for.
//
// Layout (ids are account ids, ^[A-Za-z0-9._@-]{1,64}$, so they can neither
// contain the tag's braces nor a colon that would make two keys collide):
//
//	facade:accounts:{money}:account:<id>    hash   owner currency exponent balance created
//	facade:accounts:{money}:lines:<id>      stream the statement lines of <id>: one entry per
//	                                               transfer batch touching it (lines.go)
//	facade:accounts:{money}:history:<id>    zset   the statement lines as kept before the stream:
//	                                               read-only once the upgrade is done (rollout.go)
//	facade:accounts:{money}:statement:<id>  list   the statement as kept before that (transfer ids,
//	                                               newest first): moved into history on first read
//	facade:accounts:{money}:statement-format string "stream" once every instance writes the stream
//	facade:accounts:{money}:transfer:<tid>  hash   from to amount currency exponent created ref
//	                                               from_after to_after
//	facade:accounts:{money}:index           zset   every account id, score 0 (ordered by id: ZRANGEBYLEX)
//	facade:accounts:{money}:ledger          stream one entry per transfer, in execution order
//	facade:accounts:{money}:idem:<digest>   hash   the first answer for an Idempotency-Key, 24 h
//	facade:accounts:{money}:cursor-key      string the 32-byte key sealing account list cursors
//
// Balances and amounts are canonical decimal integers of minor units;
// "created" is the Redis server's clock in Unix microseconds.
const keyPrefix = "facade:accounts:{money}:"

func accountKey(id string) string   { return keyPrefix + "account:" + id }
func linesKey(id string) string     { return keyPrefix + "lines:" + id }
func historyKey(id string) string   { return keyPrefix + "history:" + id }
func statementKey(id string) string { return keyPrefix + "statement:" + id }
func formatKey() string             { return keyPrefix + "statement-format" }
func transferKey(tid string) string { return keyPrefix + "transfer:" + tid }
func ledgerKey() string             { return keyPrefix + "ledger" }
func indexKey() string              { return keyPrefix + "index" }
func cursorKeyKey() string          { return keyPrefix + "cursor-key" }

// idempotencyKey scopes an Idempotency-Key to its principal. The two are
// hashed with a length prefix, so ("a:b","c") and ("a","b:c") differ, and a
// 255-byte client key does not make a 255-byte Redis key.
func idempotencyKey(principal, key string) string {
	h := sha256.New()
	var n [binary.MaxVarintLen64]byte
	h.Write(n[:binary.PutUvarint(n[:], uint64(len(principal)))])
	h.Write([]byte(principal))
	h.Write([]byte(key))
	return keyPrefix + "idem:" + hex.EncodeToString(h.Sum(nil))
}
