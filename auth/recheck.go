package auth

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/gorilla/securecookie"
	"golang.org/x/oauth2"

	"github.com/facade-dev/facade"
)

// A session opened with a refresh token (the provider granted
// offline_access) asks the provider about its person again at the first
// request after FACADE_SESSION_RECHECK (docs/signin.md, "Re-checking
// with the provider"): a refused refresh (invalid_grant: the person disabled or
// removed, their consent or grant revoked) ends the session; an answer
// with an ID token brings the person's current roles and groups; a
// provider that cannot be reached or fails (5xx, timeouts) ends nothing,
// and the session goes on until its lifetime. One instance asks per
// session and interval: a lease in Redis (SET NX) lets the first request
// that finds the session due ask, and the others go on with the record
// as it is.

// recheckLease bounds one re-check: while held, no other request or
// instance asks for the same session; when the provider failed, the next
// try comes after it.
const recheckLease = 30 * time.Second

// refreshTimeout bounds the call to the provider, which a request waits
// for.
const refreshTimeout = 10 * time.Second

// recheckKey names the lease of one interval of one session: the interval
// that began when the record was last checked. A request that read the
// record before a re-check finished asks for the finished interval's
// lease, which stays until it expires, so it cannot ask the provider a
// second time; the next interval has a lease of its own.
func recheckKey(id string, checked time.Time) string {
	return "facade:session:recheck:" + id + ":" + strconv.FormatInt(checked.UnixNano(), 36)
}

// refresher asks the provider with refresh token rt. refused is the
// provider's refusal (the session must end); err any other failure (the
// session goes on). p.ID is empty when the answer carried no ID token
// (the person's claims are then as before); next is the refresh token to
// keep (rotated or the same).
type refresher func(ctx context.Context, rt string) (p facade.Principal, next string, refused bool, err error)

const refreshName = "facade-refresh"

// sealRefresh encrypts and authenticates rt with the first session key.
func (s *Sessions) sealRefresh(rt string) (string, error) {
	return securecookie.EncodeMulti(refreshName, rt, s.codecs...)
}

// openRefresh opens what sealRefresh wrote, with any configured key.
func (s *Sessions) openRefresh(sealed string) (string, bool) {
	var rt string
	err := securecookie.DecodeMulti(refreshName, sealed, &rt, s.codecs...)
	return rt, err == nil && rt != ""
}

// recheckSession re-checks rec with the provider when this request wins
// the session's lease; ended says the provider refused and the session
// has been deleted. Any failure leaves rec as it was.
func (s *Sessions) recheckSession(ctx context.Context, id string, rec Record) (Record, bool) {
	won, err := s.rdb.SetNX(ctx, recheckKey(id, rec.Checked), "1", recheckLease).Result()
	if err != nil || !won {
		return rec, false
	}
	rt, ok := s.openRefresh(rec.Refresh)
	if !ok {
		return rec, false // sealed with a key no longer configured: goes on to its lifetime
	}
	cctx, cancel := context.WithTimeout(ctx, refreshTimeout)
	defer cancel()
	p, next, refused, err := s.refresher(cctx, rt)
	switch {
	case refused:
		if err := s.remove(ctx, id, rec.Sub); err != nil {
			return rec, false
		}
		s.log().InfoContext(ctx, "session ended: the provider refused to refresh it", "principal", rec.Sub)
		return rec, true
	case err != nil:
		s.log().WarnContext(ctx, "session re-check failed; the session goes on", "principal", rec.Sub, "err", err.Error())
		return rec, false
	}
	var sealed string
	if next != "" && next != rt {
		sealed, _ = s.sealRefresh(next) // "" on failure: the old token is kept
	}
	at := s.now()
	checked := func(r *Record) bool {
		if p.ID != "" {
			r.Role, r.Roles, r.Groups, r.GroupsIncomplete = p.Role, p.Roles, p.Groups, p.GroupsIncomplete
		}
		if sealed != "" {
			r.Refresh = sealed
		}
		r.Checked = at
		return true
	}
	checked(&rec)
	s.update(ctx, id, checked)
	// Done: the record says when the next is due, and the next interval
	// has its own lease; this one expires by itself. (After a failure the
	// record is unchanged, so the provider is asked again only after the
	// lease.)
	return rec, false
}

func (s *Sessions) log() *slog.Logger {
	if s.logger != nil {
		return s.logger
	}
	return slog.Default()
}

// refresh is SignIn's refresher: the refresh_token grant at the
// provider's token endpoint, and the ID token it answers verified as at
// sign-in (signature, issuer, audience, expiry).
func (s *SignIn) refresh(ctx context.Context, rt string) (facade.Principal, string, bool, error) {
	ctx = oidc.ClientContext(ctx, s.cfg.HTTPClient)
	tok, err := s.oauth.TokenSource(ctx, &oauth2.Token{RefreshToken: rt}).Token()
	if err != nil {
		s.countProvider("refresh", err)
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && re.ErrorCode == "invalid_grant" {
			return facade.Principal{}, "", true, nil
		}
		return facade.Principal{}, "", false, err
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		s.countProvider("refresh", nil)
		return facade.Principal{}, tok.RefreshToken, false, nil
	}
	idt, err := s.verifier.Verify(ctx, raw)
	s.countProvider("refresh", err)
	if err != nil {
		return facade.Principal{}, "", false, errors.New("refreshed ID token: " + err.Error())
	}
	var claims map[string]any
	if err := idt.Claims(&claims); err != nil {
		return facade.Principal{}, "", false, err
	}
	p, err := s.cfg.Claims.principal(claims)
	if err != nil {
		return facade.Principal{}, "", false, err
	}
	if p.GroupsIncomplete {
		warnOverage(ctx, s.cfg.Log, p.ID)
	}
	return p, tok.RefreshToken, false, nil
}
