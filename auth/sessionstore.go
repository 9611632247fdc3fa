package auth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"sort"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/facade-dev/facade"
)

// Redis keys of sessions, this package's only key space: a record per
// session, and per principal the set of its session ids (for `facade
// sessions list|revoke`). Records expire by themselves at the end of their
// idle time or lifetime, whichever is first; an id left in a principal's
// set after its record is gone is dropped the next time the set is read.
//
// For back-channel logout, the sessions of each provider sub and of each
// provider sid (hashed: they are the provider's strings, of any length),
// and the logout tokens' jti already accepted.
const (
	sessionKeyPrefix = "facade:session:id:"
	subKeyPrefix     = "facade:session:sub:"
	psubKeyPrefix    = "facade:session:psub:"
	psidKeyPrefix    = "facade:session:psid:"
	jtiKeyPrefix     = "facade:session:logout-jti:"
)

func sessionKey(id string) string { return sessionKeyPrefix + id }
func subKey(sub string) string    { return subKeyPrefix + sub }
func psubKey(sub string) string   { return psubKeyPrefix + hashed(sub) }
func psidKey(sid string) string   { return psidKeyPrefix + hashed(sid) }
func jtiKey(iss, jti string) string {
	return jtiKeyPrefix + hashed(iss+"\x00"+jti)
}

func hashed(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:16])
}

// errNoStore is a Sessions built without Redis (settings checks) asked
// for a session.
var errNoStore = errors.New("auth: sessions have no store")

// storeError is ErrStoreUnavailable for any failure to reach Redis: the
// caller answers 503 with Retry-After, never "signed out".
func storeError(err error) error {
	if err == nil {
		return nil
	}
	return facade.Wrap(facade.ErrStoreUnavailable, err)
}

// ttl is how long Redis keeps rec from now: until it would end unused.
func (s *Sessions) ttl(rec Record) time.Duration {
	now := s.now()
	d := min(rec.Expires.Sub(now), rec.LastUsed.Add(s.idle).Sub(now))
	return max(d, time.Second)
}

// store writes a new session and adds it to its principal's set.
func (s *Sessions) store(ctx context.Context, id string, rec Record) error {
	if s.rdb == nil {
		return errNoStore
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	_, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, sessionKey(id), b, s.ttl(rec))
		p.SAdd(ctx, subKey(rec.Sub), id)
		// The set lives as long as the longest session in it can.
		p.Expire(ctx, subKey(rec.Sub), s.lifetime+cookieGrace)
		for _, k := range providerKeys(rec) {
			p.SAdd(ctx, k, id)
			p.Expire(ctx, k, s.lifetime+cookieGrace)
		}
		return nil
	})
	return storeError(err)
}

// providerKeys are the back-channel logout sets rec belongs to.
func providerKeys(rec Record) []string {
	var keys []string
	if rec.ProviderSub != "" {
		keys = append(keys, psubKey(rec.ProviderSub))
	}
	if rec.ProviderSID != "" {
		keys = append(keys, psidKey(rec.ProviderSID))
	}
	return keys
}

// load reads one session's record: facade.ErrSessionExpired when it is gone.
func (s *Sessions) load(ctx context.Context, id string) (Record, error) {
	if s.rdb == nil {
		return Record{}, storeError(errNoStore)
	}
	b, err := s.rdb.Get(ctx, sessionKey(id)).Bytes()
	if errors.Is(err, redis.Nil) {
		return Record{}, facade.ErrSessionExpired
	}
	if err != nil {
		return Record{}, storeError(err)
	}
	var rec Record
	if err := json.Unmarshal(b, &rec); err != nil || !usableName(rec.Sub) {
		return Record{}, facade.ErrSessionInvalid
	}
	return rec, nil
}

// update applies change to the stored record of session id, read and
// written under WATCH, so two requests that change one session at once
// both land: a request that read the record before a re-check finished
// slides the idle time of the re-checked record, never writes back the
// claims and refresh token it read (a rotated refresh token lost that way
// would end the session at the next re-check). change reports whether
// there is anything to write: the requests that find the idle time slid
// by another write nothing, so many at once cost one write, and the one
// change that matters is not crowded out of its retries. Nothing is
// written when the session is gone: a logout or revoke is never undone. A
// failure is not the request's: the read succeeded, and the change is
// tried again at a later request.
func (s *Sessions) update(ctx context.Context, id string, change func(*Record) bool) {
	key := sessionKey(id)
	apply := func(tx *redis.Tx) error {
		b, err := tx.Get(ctx, key).Bytes()
		if err != nil {
			return err // redis.Nil: gone, nothing to write
		}
		var rec Record
		if err := json.Unmarshal(b, &rec); err != nil {
			return err
		}
		if !change(&rec) {
			return nil
		}
		if b, err = json.Marshal(rec); err != nil {
			return err
		}
		_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.SetXX(ctx, key, b, s.ttl(rec))
			return nil
		})
		return err
	}
	// Another write landing between the read and this one fails the
	// transaction (redis.TxFailedErr): read again and apply on top of it.
	for range updateTries {
		if err := s.rdb.Watch(ctx, apply, key); !errors.Is(err, redis.TxFailedErr) {
			return
		}
	}
	s.log().WarnContext(ctx, "session not updated: changed by other requests at every try", "tries", updateTries)
}

// updateTries bounds update's reads: each retry follows another request's
// write, and after the first slide of the minute the others write nothing.
const updateTries = 5

// remove deletes one session everywhere.
func (s *Sessions) remove(ctx context.Context, id, sub string) error {
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Del(ctx, sessionKey(id))
		p.SRem(ctx, subKey(sub), id)
		return nil
	})
	return storeError(err)
}

// SessionInfo is one of a principal's sessions as ops see it: never its
// id or tokens, which would let the reader use it.
type SessionInfo struct {
	Created  time.Time `json:"created"`
	LastUsed time.Time `json:"last_used"`
	Expires  time.Time `json:"expires"`
	Client   string    `json:"client"`
}

// List returns sub's current sessions, oldest first (`facade sessions
// list`). Ids whose record is gone are dropped from the set.
func (s *Sessions) List(ctx context.Context, sub string) ([]SessionInfo, error) {
	if s.rdb == nil {
		return nil, storeError(errNoStore)
	}
	ids, err := s.rdb.SMembers(ctx, subKey(sub)).Result()
	if err != nil {
		return nil, storeError(err)
	}
	gets := make([]*redis.StringCmd, len(ids))
	_, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			gets[i] = p.Get(ctx, sessionKey(id))
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, storeError(err)
	}
	var out []SessionInfo
	var gone []any
	for i, g := range gets {
		var rec Record
		b, err := g.Bytes()
		if err != nil || json.Unmarshal(b, &rec) != nil || !s.now().Before(rec.Expires) || s.now().Sub(rec.LastUsed) >= s.idle {
			gone = append(gone, ids[i])
			continue
		}
		out = append(out, SessionInfo{Created: rec.Created, LastUsed: rec.LastUsed, Expires: rec.Expires, Client: rec.Client})
	}
	if len(gone) > 0 {
		_ = s.rdb.SRem(ctx, subKey(sub), gone...).Err()
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Created.Before(out[j].Created) })
	return out, nil
}

// Revoke ends every session of sub at once, on every instance (`facade
// sessions revoke`): their next request is refused. It returns how many
// records it deleted.
func (s *Sessions) Revoke(ctx context.Context, sub string) (int, error) {
	if s.rdb == nil {
		return 0, storeError(errNoStore)
	}
	ids, err := s.rdb.SMembers(ctx, subKey(sub)).Result()
	if err != nil {
		return 0, storeError(err)
	}
	dels := make([]*redis.IntCmd, len(ids))
	_, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			dels[i] = p.Del(ctx, sessionKey(id))
		}
		p.Del(ctx, subKey(sub))
		return nil
	})
	if err != nil {
		return 0, storeError(err)
	}
	n := 0
	for _, d := range dels {
		n += int(d.Val())
	}
	return n, nil
}

// EndProviderSessions ends, on every instance at once, the sessions a
// back-channel logout names: with sid, the sessions opened in that
// provider session (and of that provider sub, when sub is given too);
// with sub alone, every session of that provider sub. It returns the
// principals whose sessions ended.
func (s *Sessions) EndProviderSessions(ctx context.Context, sub, sid string) ([]string, error) {
	if s.rdb == nil {
		return nil, storeError(errNoStore)
	}
	set := psubKey(sub)
	if sid != "" {
		set = psidKey(sid)
	}
	ids, err := s.rdb.SMembers(ctx, set).Result()
	if err != nil {
		return nil, storeError(err)
	}
	var ended []string
	for _, id := range ids {
		rec, err := s.load(ctx, id)
		switch {
		case errors.Is(err, facade.ErrStoreUnavailable):
			return ended, err
		case err != nil:
			continue // gone already
		case sid != "" && rec.ProviderSID != sid, sub != "" && rec.ProviderSub != sub:
			continue // the set is a hint; the record decides
		}
		if err := s.remove(ctx, id, rec.Sub); err != nil {
			return ended, err
		}
		ended = append(ended, rec.Sub)
	}
	return ended, nil
}

// acceptOnce records a logout token's jti for ttl, on every instance:
// false when it was accepted before (a replay).
func (s *Sessions) acceptOnce(ctx context.Context, iss, jti string, ttl time.Duration) (bool, error) {
	if s.rdb == nil {
		return false, storeError(errNoStore)
	}
	ok, err := s.rdb.SetNX(ctx, jtiKey(iss, jti), "1", ttl).Result()
	return ok, storeError(err)
}

// forgetOnce undoes acceptOnce when the logout could not be carried out,
// so that the provider's retry is not taken for a replay.
func (s *Sessions) forgetOnce(ctx context.Context, iss, jti string) {
	_ = s.rdb.Del(ctx, jtiKey(iss, jti)).Err()
}
