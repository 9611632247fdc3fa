package grades

import (
	"strconv"
	"strings"

	"github.com/facade-dev/facade"
)

// maxIfMatchLen bounds the header we bother to parse; a version tag is at most
// 19 digits plus quotes and the weak prefix.
const maxIfMatchLen = 64

// ETag returns the entity tag of a record version, e.g. `"3"`.
func ETag(version int64) string {
	return `"` + strconv.FormatInt(version, 10) + `"`
}

// ParseIfMatch reads an If-Match header into the version it requires.
//
//   - "" (no header) and "*" return nil: the update proceeds on whatever
//     version exists. "*" means "any current representation", and Update
//     already refuses a grade that does not exist, so nil says exactly that.
//   - `"3"`, `"3-unposted"` (StaffETag) and `W/"3"` return 3: posting
//     does not change the grade, so a tag read before a post still
//     matches after it. Weak tags are accepted on purpose: our tags
//     are versions, hence strong in fact, and proxies (nginx gzip, for one)
//     weaken ETags on the way to the client.
//   - Surrounding spaces and tabs are ignored (HTTP optional whitespace).
//
// Anything else is ErrBadIfMatch: "unquoted" for a value without any
// quote (`3`, the commonest slip: the tag is the quoted string), else
// "malformed": a tag that is not a version we could have issued (`"abc"`,
// `"03"`, `"-1"`), a missing quote, or a list of several tags (the API
// only ever issues one tag per record).
func ParseIfMatch(h string) (*int64, error) {
	h = strings.Trim(h, " \t")
	if h == "" || h == "*" {
		return nil, nil
	}
	bad := facade.Refuse(facade.ErrBadIfMatch, "If-Match", facade.ReasonMalformed)
	if !strings.Contains(h, `"`) {
		return nil, facade.Refuse(facade.ErrBadIfMatch, "If-Match", facade.ReasonUnquoted)
	}
	if len(h) > maxIfMatchLen {
		return nil, bad
	}
	h = strings.TrimPrefix(h, "W/")
	if len(h) < 3 || h[0] != '"' || h[len(h)-1] != '"' {
		return nil, bad
	}
	digits := strings.TrimSuffix(h[1:len(h)-1], unpostedSuffix) // StaffETag's tag of an unposted version
	if !canonicalDigits(digits) {
		return nil, bad
	}
	v, err := strconv.ParseInt(digits, 10, 64)
	if err != nil { // overflow
		return nil, bad
	}
	return &v, nil
}

// canonicalDigits reports whether s is a decimal number as ETag writes it:
// ASCII digits only, no sign, no leading zero. Requiring the canonical form
// keeps one version to one tag, so the comparison in Redis can be textual.
func canonicalDigits(s string) bool {
	if s == "" || (s[0] == '0' && len(s) > 1) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
