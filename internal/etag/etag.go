// Package etag computes the strong entity tag of a read's answer from the
// bytes the caller receives (docs/contract.md §2, "Conditional reads").
// It is the one tag function of the service: server's conditional
// middleware tags the answers it holds, and package proxy tags each
// cached view once, when the view is built, so that a warm read is tagged
// without hashing it again; both must agree, byte for byte, for a tag a
// client holds to stay valid whichever of them made it.
package etag

import (
	"encoding/hex"

	"github.com/cespare/xxhash/v2"
)

// Strong is the ETag of body: 64 bits of xxhash, hex, quoted. Fast
// (several GB/s) and, for the versions of one resource a client holds,
// as unlikely to collide as anyone could notice.
func Strong(body []byte) string {
	var sum [8]byte
	v := xxhash.Sum64(body)
	for i := range sum {
		sum[i] = byte(v >> (56 - 8*i))
	}
	var out [18]byte
	out[0], out[17] = '"', '"'
	hex.Encode(out[1:17], sum[:])
	return string(out[:])
}
