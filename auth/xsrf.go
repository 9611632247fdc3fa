package auth

import (
	"crypto/subtle"
	"net/http"

	"github.com/facade-dev/facade"
)

// CheckXSRF is the anti-forgery rule of docs/contract.md §2: an unsafe
// request carries X-XSRF-TOKEN, 1 to 256 visible ASCII characters. When
// the caller is authenticated by the session cookie, the session's own
// token decides, and an XSRF-TOKEN cookie is not looked at: a sibling
// subdomain can write that cookie for this host, so it must neither pass
// (a token it chose) nor block (a second cookie first in the header) a
// person's writes. The session's token sits in the session record, which
// no other site can read or forge. Bearer callers keep the
// header-and-cookie rule: when an XSRF-TOKEN cookie comes, the header
// equals it.
func CheckXSRF(r *http.Request, id Identity) error {
	if SafeMethod(r.Method) {
		return nil
	}
	token := r.Header.Get(XSRFHeader)
	if !visibleASCII(token, 256) {
		return facade.ErrXSRF
	}
	if id.Via == ViaSession {
		if !equal(id.xsrf, token) {
			return facade.ErrXSRF
		}
		return nil
	}
	if c, err := r.Cookie(XSRFCookie); err == nil && !equal(c.Value, token) {
		return facade.ErrXSRF
	}
	return nil
}

// SameOrigin reports whether a browser sent r from a page of origin (the
// service's public origin), which is when the session cookie counts
// (docs/contract.md §2: other origins use bearer tokens). Fetch metadata
// decides when the browser sends it: same-origin, or none (the person
// typed the address or followed a bookmark) for a safe method. Without it,
// an Origin header must be ours. A request with neither comes from no
// browser that would have attached a cookie for another site's page.
func SameOrigin(r *http.Request, origin string) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "same-origin":
		return true
	case "none":
		return SafeMethod(r.Method)
	case "":
	default: // same-site (a sibling subdomain, another port), cross-site
		return false
	}
	if o := r.Header.Get("Origin"); o != "" {
		return o == origin
	}
	return true
}

// SafeMethod reports whether m is a method that changes nothing (GET, HEAD,
// OPTIONS): those need no anti-forgery token, and CORS lets read origins use them.
func SafeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

func equal(a, b string) bool {
	return a != "" && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

func visibleASCII(s string, max int) bool {
	if len(s) == 0 || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
