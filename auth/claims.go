package auth

import (
	"errors"

	"github.com/facade-dev/facade"
)

// Claims names the claims a principal is read from, in ID tokens and
// bearer tokens alike (FACADE_OIDC_USER_CLAIM, FACADE_ROLE_CLAIM,
// FACADE_GROUPS_CLAIM). Empty names take the defaults.
type Claims struct {
	User   string // default "sub"
	Role   string // default "role"
	Groups string // default "groups"
}

func (c Claims) withDefaults() Claims {
	if c.User == "" {
		c.User = "sub"
	}
	if c.Role == "" {
		c.Role = "role"
	}
	if c.Groups == "" {
		c.Groups = "groups"
	}
	return c
}

// Limits on what a token may make of a principal: an id or group name
// with control characters could forge log lines or collide with keys built
// from it. Groups are bounded only against a hostile token: 2048 is ten
// times what Microsoft Entra puts in a token (200, then an overage claim),
// so no real person's group is dropped, and a grade question over 2048
// groups still costs about a millisecond (README, "Signing in with your identity provider").
const (
	maxNameLen = 256
	maxGroups  = 2048
)

var errNoUser = errors.New("the user claim is missing or not a usable id")

// principal reads claims into a Principal. The user claim is required; a
// role that is absent or not a string means "no role", not an error
// (docs/contract.md §3); groups are a list of strings (or one string),
// and entries that are not usable names are left out.
func (c Claims) principal(claims map[string]any) (facade.Principal, error) {
	c = c.withDefaults()
	id, _ := claims[c.User].(string)
	if !usableName(id) {
		return facade.Principal{}, errNoUser
	}
	role, _ := claims[c.Role].(string)
	if !usableName(role) {
		role = ""
	}
	return facade.Principal{ID: id, Role: role, Groups: groups(claims[c.Groups])}, nil
}

func groups(v any) []string {
	var raw []any
	switch g := v.(type) {
	case string:
		raw = []any{g}
	case []any:
		raw = g
	case []string:
		for _, s := range g {
			raw = append(raw, s)
		}
	}
	var out []string
	for _, r := range raw {
		// One rule for group names everywhere (facade.ValidGroupName): 1 to
		// 256 printable characters, ':', '/' and spaces included. A name
		// with a control or format character is dropped whole, never
		// trimmed or rewritten into some other group's name.
		if s, ok := r.(string); ok && facade.ValidGroupName(s) && len(out) < maxGroups {
			out = append(out, s)
		}
	}
	return out
}

func usableName(s string) bool {
	if s == "" || len(s) > maxNameLen {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}
