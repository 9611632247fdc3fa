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
// transfer (see BenchmarkTransferScriptDirect for what that core does).
// Sharding accounts across slots would need a two-phase protocol (reserve
// on the source, saga to the destination) and give up the single atomic
// step docs/contract.md §5 asks for.
//
// Layout (ids are account ids, ^[A-Za-z0-9._@-]{1,64}$, so they can neither
// contain the tag's braces nor a colon that would make two keys collide):
//
//	facade:accounts:{money}:account:<id>    hash  owner currency exponent balance created
//	facade:accounts:{money}:history:<id>    zset  transfer ids touching <id>, scored by their place
//	                                              in its history (statement.go says how)
//	facade:accounts:{money}:statement:<id>  list  the statement as kept before (transfer ids, newest
//	                                              first): MigrateStatements moves it into history
//	facade:accounts:{money}:transfer:<tid>  hash  from to amount currency exponent created
//	facade:accounts:{money}:index           zset   every account id, score 0 (ordered by id: ZRANGEBYLEX)
//	facade:accounts:{money}:ledger          stream one entry per transfer, in execution order
//	facade:accounts:{money}:idem:<digest>   hash  the first answer for an Idempotency-Key, 24 h
//	facade:accounts:{money}:cursor-key      string the 32-byte key sealing account list cursors
//
// Balances and amounts are canonical decimal integers of minor units;
// "created" is the Redis server's clock in Unix microseconds.
const keyPrefix = "facade:accounts:{money}:"

func accountKey(id string) string   { return keyPrefix + "account:" + id }
func historyKey(id string) string   { return keyPrefix + "history:" + id }
func statementKey(id string) string { return keyPrefix + "statement:" + id }
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
