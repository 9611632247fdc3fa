package main

import (
	"fmt"
	"net/url"
	"strings"
)

// Secrets serve will not run with (docs/operations.md, "Secrets"): a
// placeholder the repository's own files show (the example Secret, the
// docs), which anyone holding the repository knows, or a value too weak to
// be a secret. Each is one line naming the variable as it was set (NAME or
// NAME_FILE), never the value.

// minDistinctBytes: a value with fewer different bytes is a word, a run or
// a keyboard pattern, not a generated secret (docs/operations.md, "Secrets",
// gives the odds of a generated one falling under it).
const minDistinctBytes = 8

// isPlaceholder reports the documentation's ways of writing "yours here":
// REPLACE… (any case, anywhere in the value) and <…>.
func isPlaceholder(v string) bool {
	return strings.Contains(strings.ToUpper(v), "REPLACE") ||
		(len(v) > 2 && strings.HasPrefix(v, "<") && strings.HasSuffix(v, ">"))
}

// isWeak reports a value of fewer than minDistinctBytes different bytes,
// or a shorter string repeated ("mysecretmysecretmysecret…").
func isWeak(b []byte) bool {
	var seen [256]bool
	distinct := 0
	for _, c := range b {
		if !seen[c] {
			seen[c] = true
			distinct++
		}
	}
	return distinct < minDistinctBytes || period(b) <= len(b)/2
}

// period is the length of b's shortest period: the smallest p with
// b[i] == b[i+p] wherever both exist (from the KMP failure function).
func period(b []byte) int {
	if len(b) == 0 {
		return 0
	}
	fail := make([]int, len(b))
	for i, k := 1, 0; i < len(b); i++ {
		for k > 0 && b[i] != b[k] {
			k = fail[k-1]
		}
		if b[i] == b[k] {
			k++
		}
		fail[i] = k
	}
	return len(b) - fail[len(b)-1]
}

// checkSecrets lists the secret settings serve refuses: placeholders and
// weak values of the JWT keys, the session keys, the client secret and
// the upstream token, and a placeholder for the Redis password.
func (s settings) checkSecrets() []error {
	bad := s.checkJWTKeys()
	for i, k := range s.SessionKeys {
		bad = appendBadSecret(bad, s.source("FACADE_SESSION_KEYS"), fmt.Sprintf(" entry %d", i+1), k)
	}
	for name, v := range map[string]string{"FACADE_OIDC_CLIENT_SECRET": s.OIDCClientSecret, "FACADE_UPSTREAM_TOKEN": s.UpstreamToken} {
		if v != "" {
			bad = appendBadSecret(bad, s.source(name), "", []byte(v))
		}
	}
	if u, err := url.Parse(s.RedisURL); err == nil && u.User != nil {
		if p, _ := u.User.Password(); isPlaceholder(p) || isPlaceholder(u.User.Username()) {
			bad = append(bad, fmt.Errorf("%s: its password is a placeholder from the documentation: set the Redis password", s.source("FACADE_REDIS_URL")))
		}
	}
	return bad
}

// checkJWTKeys is checkSecrets for FACADE_JWT_SECRET alone: serve and
// `facade token`, which signs with its first key, refuse the same keys.
func (s settings) checkJWTKeys() []error {
	var bad []error
	keys := s.jwtKeys()
	for i, k := range keys {
		part := ""
		if len(keys) > 1 {
			part = fmt.Sprintf(" key %d of %d", i+1, len(keys))
		}
		switch {
		case len(k) < 32 && !isPlaceholder(string(k)):
			// auth refuses it, naming it
		case len(keys) > 1 && strings.TrimSpace(string(k)) != string(k):
			bad = append(bad, fmt.Errorf("%s%s begins or ends with a space: separate the keys with a comma alone", s.source("FACADE_JWT_SECRET"), part))
		default:
			bad = appendBadSecret(bad, s.source("FACADE_JWT_SECRET"), part, k)
		}
	}
	return bad
}

// appendBadSecret adds to bad why v (source, part) is refused, if it is:
// a placeholder or a weak value.
func appendBadSecret(bad []error, source, part string, v []byte) []error {
	switch {
	case isPlaceholder(string(v)):
		bad = append(bad, fmt.Errorf("%s%s is a placeholder from the documentation: set a secret of your own", source, part))
	case isWeak(v):
		bad = append(bad, fmt.Errorf("%s%s is too weak to be a secret (fewer than %d different characters, or a short pattern repeated): generate one, e.g. openssl rand -base64 48",
			source, part, minDistinctBytes))
	}
	return bad
}
