package cache

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Every Redis key this package touches:
//
//	facade:cache:doc:<kind>:{<sha256 hex of the caller key>}   one cached document (string, PX TTL+Stale)
//	facade:cache:lock:<kind>:{<sha256 hex of the caller key>}  the cross-instance fill lock (string token, PX LockTTL)
//
// The caller key is hashed, so any text is safe in it. <kind> is the caller
// key's first ":"-separated segment when it is a short lowercase word
// ("projects", "results"), else "any": it only lets ops scan one kind
// (redis-cli --scan --pattern 'facade:cache:doc:results:*'). The braces make
// a document and its lock share one Redis Cluster hash slot.
const (
	keyPrefix  = "facade:cache:"
	docPrefix  = keyPrefix + "doc:"
	lockPrefix = keyPrefix + "lock:"
)

const maxKindLen = 32

// docKey returns the Redis key of the document cached under callerKey.
func docKey(callerKey string) string {
	sum := sha256.Sum256([]byte(callerKey))
	var hexSum [sha256.Size * 2]byte
	hex.Encode(hexSum[:], sum[:])
	kind := kindOf(callerKey)

	var b strings.Builder
	b.Grow(len(docPrefix) + len(kind) + 3 + len(hexSum))
	b.WriteString(docPrefix)
	b.WriteString(kind)
	b.WriteString(":{")
	b.Write(hexSum[:])
	b.WriteByte('}')
	return b.String()
}

// lockKey returns the fill-lock key that belongs to a document key.
func lockKey(docKey string) string {
	return lockPrefix + strings.TrimPrefix(docKey, docPrefix)
}

// kindOf returns the readable part of a key, or "any" when the caller key
// does not start with a short lowercase word.
func kindOf(callerKey string) string {
	kind, _, found := strings.Cut(callerKey, ":")
	if !found || kind == "" || len(kind) > maxKindLen {
		return "any"
	}
	for i := 0; i < len(kind); i++ {
		ch := kind[i]
		if !('a' <= ch && ch <= 'z' || '0' <= ch && ch <= '9' || ch == '_' || ch == '-') {
			return "any"
		}
	}
	return kind
}
