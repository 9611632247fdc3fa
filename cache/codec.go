package cache

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"time"
)

// A stored document is ONE Redis string, so a read is one GET:
//
//	byte  0       format (1)
//	bytes 1..8    stored-at, Unix milliseconds, big-endian
//	bytes 9..40   version: 32 hex characters, the first 128 bits of sha256(body)
//	bytes 41..    body
//
// A value that does not parse (another format, a truncated write) is
// treated as absent and overwritten by the next fill.
const (
	formatV1   = 1
	versionLen = 32
	headerLen  = 1 + 8 + versionLen
)

// stored is a decoded Redis value; the zero value means "nothing stored".
type stored struct {
	body     []byte
	storedAt time.Time
	version  string
	ok       bool
}

// versionOf names a body's content: equal bodies, equal versions.
func versionOf(body []byte) string {
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:versionLen/2])
}

func encode(e Entry) []byte {
	raw := make([]byte, headerLen+len(e.Body))
	raw[0] = formatV1
	binary.BigEndian.PutUint64(raw[1:9], uint64(e.StoredAt.UnixMilli()))
	copy(raw[9:headerLen], e.Version)
	copy(raw[headerLen:], e.Body)
	return raw
}

// decode parses raw without copying the body: the result shares raw.
func decode(raw []byte) stored {
	if len(raw) < headerLen || raw[0] != formatV1 {
		return stored{}
	}
	ms := int64(binary.BigEndian.Uint64(raw[1:9]))
	return stored{
		body:     raw[headerLen:],
		storedAt: time.UnixMilli(ms),
		version:  string(raw[9:headerLen]),
		ok:       true,
	}
}

// age is how long ago the document was stored, by this instance's clock.
func (s stored) age(now time.Time) time.Duration { return now.Sub(s.storedAt) }

func (s stored) entry(status Status) Entry {
	return Entry{Body: s.body, Status: status, StoredAt: s.storedAt, Version: s.version}
}
