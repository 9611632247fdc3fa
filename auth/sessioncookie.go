package auth

import (
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// derive gives each use of a configured key its own key (HKDF-SHA256), so
// the MAC and the cipher never share one.
func derive(key []byte, use string) []byte {
	k, err := hkdf.Key(sha256.New, key, nil, use, 32)
	if err != nil {
		panic(err) // only for lengths HKDF-SHA256 cannot produce; 32 is not one
	}
	return k
}

// ParseKeys reads FACADE_SESSION_KEYS: base64 (standard or URL alphabet,
// padded or not) of 32 bytes each.
func ParseKeys(list []string) ([][]byte, error) {
	var keys [][]byte
	for i, v := range list {
		k, err := decodeBase64(v)
		if err != nil || len(k) != 32 {
			return nil, configError(fmt.Sprintf("FACADE_SESSION_KEYS entry %d must be base64 of 32 bytes (e.g. from openssl rand -base64 32)", i+1))
		}
		keys = append(keys, k)
	}
	return keys, nil
}

func decodeBase64(v string) ([]byte, error) {
	v = strings.TrimRight(v, "=")
	if k, err := base64.RawStdEncoding.DecodeString(v); err == nil {
		return k, nil
	}
	return base64.RawURLEncoding.DecodeString(v)
}

// SecureCookies reports whether cookies for publicURL must be Secure: all
// but plain http on a loopback host (a developer's machine, the demo).
func SecureCookies(scheme, host string) bool {
	if scheme == "https" {
		return true
	}
	return !isLoopback(host)
}

func isLoopback(host string) bool {
	return host == "localhost" || host == "127.0.0.1" || host == "::1" || host == "[::1]"
}

func (s *Sessions) cookieName(name string) string {
	if s.secure {
		return hostPrefix + name
	}
	return name
}

// SessionCookie is the session cookie's name under this configuration.
func (s *Sessions) SessionCookie() string { return s.cookieName(sessionName) }

// cookie builds one of our cookies with the attributes of docs/contract.md
// §2: HttpOnly, SameSite=Lax (sent on the provider's redirect back, a
// top-level navigation, but not on other sites' requests), Path=/, and
// Secure with the __Host- prefix unless on plain-http loopback.
func (s *Sessions) cookie(name, value string, maxAge time.Duration, httpOnly bool) *http.Cookie {
	c := &http.Cookie{
		Name: s.cookieName(name), Value: value, Path: "/",
		HttpOnly: httpOnly, Secure: s.secure, SameSite: http.SameSiteLaxMode,
		MaxAge: int(maxAge / time.Second),
	}
	if maxAge < 0 {
		c.MaxAge = -1
	}
	return c
}

// xsrfCookie is readable by the page's script, which copies it into the
// X-XSRF-TOKEN header. No prefix: pages and clients know it by this name.
func (s *Sessions) xsrfCookie(value string, maxAge time.Duration) *http.Cookie {
	c := s.cookie(XSRFCookie, value, maxAge, false)
	c.Name = XSRFCookie
	return c
}

// cleared are the cookies that remove the session and its XSRF-TOKEN.
func (s *Sessions) cleared() []*http.Cookie {
	return []*http.Cookie{s.cookie(sessionName, "", -1, true), s.xsrfCookie("", -1)}
}
