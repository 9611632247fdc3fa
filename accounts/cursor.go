package accounts

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/redisdb"
)

// A list cursor is where an account list page's walk stopped, sealed
// (docs/contract.md §5): AES-256-GCM under a key every instance shares,
// kept in Redis, so a cursor names no account (its holder cannot read the
// id it holds) and cannot be forged or edited to start a walk anywhere
// else; it is bound to the principal it was given to.

// cursorKeys holds the sealing key once read from Redis.
type cursorKeys struct {
	mu   sync.Mutex
	aead cipher.AEAD
}

// errBadCursor refuses a cursor that does not open: edited, forged, of
// another principal or account, or sealed under a key this store no
// longer holds.
var errBadCursor = facade.Refuse(facade.ErrBadParameter, "cursor", facade.ReasonNotIssued)

// cursorAEAD returns the sealing cipher, creating the shared key on first
// use (SETNX: the first instance's key wins, every instance reads it).
func (s *Store) cursorAEAD(ctx context.Context) (cipher.AEAD, error) {
	s.cursors.mu.Lock()
	defer s.cursors.mu.Unlock()
	if s.cursors.aead != nil {
		return s.cursors.aead, nil
	}
	fresh := make([]byte, 32)
	_, _ = rand.Read(fresh)
	if err := s.rdb.SetNX(ctx, cursorKeyKey(), fresh, 0).Err(); err != nil {
		return nil, redisdb.Error(err)
	}
	key, err := s.rdb.Get(ctx, cursorKeyKey()).Bytes()
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, redisdb.Error(err)
	}
	if len(key) != 32 {
		return nil, corrupt("cursor key")
	}
	block, _ := aes.NewCipher(key) // 32 bytes: never fails
	aead, _ := cipher.NewGCM(block)
	s.cursors.aead = aead
	return aead, nil
}

// SealCursor seals lastID, where an account list's walk stopped, for
// principal.
func (s *Store) SealCursor(ctx context.Context, principal string, lastID facade.AccountID) (string, error) {
	return s.seal(ctx, []byte(principal), []byte(lastID.String()))
}

// OpenCursor returns the id an account list cursor sealed for principal
// holds; any other cursor is a 400 naming the parameter.
func (s *Store) OpenCursor(ctx context.Context, principal, cursor string) (facade.AccountID, error) {
	payload, err := s.open(ctx, []byte(principal), cursor)
	if err != nil {
		return facade.AccountID{}, errBadCursor
	}
	id, err := facade.ParseAccountID(string(payload))
	if err != nil {
		return facade.AccountID{}, errBadCursor
	}
	return id, nil
}

// seal encrypts payload, authenticated together with bound (who and what
// the cursor is for: it opens only with the same bound).
func (s *Store) seal(ctx context.Context, bound, payload []byte) (string, error) {
	aead, err := s.cursorAEAD(ctx)
	if err != nil {
		return "", err
	}
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(payload)+aead.Overhead())
	_, _ = rand.Read(nonce)
	sealed := aead.Seal(nonce, nonce, payload, bound)
	return base64.RawURLEncoding.EncodeToString(sealed), nil
}

// open returns what a cursor sealed with bound holds; any other cursor is
// errBadCursor.
func (s *Store) open(ctx context.Context, bound []byte, cursor string) ([]byte, error) {
	aead, err := s.cursorAEAD(ctx)
	if err != nil {
		return nil, err
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(cursor) // Strict: one text per cursor, an edited last character included
	if err != nil || len(raw) < aead.NonceSize()+aead.Overhead() {
		return nil, errBadCursor
	}
	payload, err := aead.Open(nil, raw[:aead.NonceSize()], raw[aead.NonceSize():], bound)
	if err != nil {
		return nil, errBadCursor
	}
	return payload, nil
}
