package cache

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"time"
)

// A stored document is ONE Redis string, so a read is one GET:
//
//	byte  0       format (2; 1 has no lifetime)
//	bytes 1..8    stored-at, Unix milliseconds, big-endian
//	bytes 9..16   fresh lifetime, milliseconds, big-endian (format 2 only)
//	then          version: 32 hex characters, the first 128 bits of sha256(body)
//	then          body
//
// The lifetime travels with the document, so every instance judges it
// fresh alike whatever decided it (a finished result: a day; a running
// one: seconds). A format 1 value (written before lifetimes) is fresh
// for Config.TTL. A value that does not parse (another format, a
// truncated write) is treated as absent and overwritten by the next fill.
const (
	formatV1   = 1
	formatV2   = 2
	versionLen = 32
	headerV1   = 1 + 8 + versionLen
	headerLen  = 1 + 8 + 8 + versionLen
)

// stored is a decoded Redis value; the zero value means "nothing stored".
type stored struct {
	body     []byte
	storedAt time.Time
	life     time.Duration // 0: Config.TTL
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
	raw[0] = formatV2
	binary.BigEndian.PutUint64(raw[1:9], uint64(e.StoredAt.UnixMilli()))
	binary.BigEndian.PutUint64(raw[9:17], uint64(e.FreshFor.Milliseconds()))
	copy(raw[17:headerLen], e.Version)
	copy(raw[headerLen:], e.Body)
	return raw
}

// decode parses raw without copying the body: the result shares raw.
func decode(raw []byte) stored {
	switch {
	case len(raw) >= headerLen && raw[0] == formatV2:
		return stored{
			body:     raw[headerLen:],
			storedAt: time.UnixMilli(int64(binary.BigEndian.Uint64(raw[1:9]))),
			life:     time.Duration(binary.BigEndian.Uint64(raw[9:17])&(1<<62-1)) * time.Millisecond,
			version:  string(raw[17:headerLen]),
			ok:       true,
		}
	case len(raw) >= headerV1 && raw[0] == formatV1:
		return stored{
			body:     raw[headerV1:],
			storedAt: time.UnixMilli(int64(binary.BigEndian.Uint64(raw[1:9]))),
			version:  string(raw[9:headerV1]),
			ok:       true,
		}
	}
	return stored{}
}

// age is how long ago the document was stored, by this instance's clock.
func (s stored) age(now time.Time) time.Duration { return now.Sub(s.storedAt) }

func (s stored) entry(status Status) Entry {
	return Entry{Body: s.body, Status: status, StoredAt: s.storedAt, FreshFor: s.life, Version: s.version}
}
