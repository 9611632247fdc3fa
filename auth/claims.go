package auth

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"slices"

	"github.com/facade-dev/facade"
)

// Claims names the claims a principal is read from, in ID tokens and
// bearer tokens alike (FACADE_OIDC_USER_CLAIM, FACADE_ROLE_CLAIM,
// FACADE_GROUPS_CLAIM). Empty names take the defaults. Role and Groups are
// paths into nested claims (claimpath.go): Keycloak's realm_access.roles,
// resource_access.facade.roles, ["name.with.dot"] for a name with a dot.
type Claims struct {
	User   string
	Role   string
	Groups string
}

// DefaultClaims are the names an empty Claims field takes, and the
// settings' defaults.
var DefaultClaims = Claims{User: "sub", Role: "role", Groups: "groups"}

func (c Claims) withDefaults() Claims {
	c.User = cmp.Or(c.User, DefaultClaims.User)
	c.Role = cmp.Or(c.Role, DefaultClaims.Role)
	c.Groups = cmp.Or(c.Groups, DefaultClaims.Groups)
	return c
}

// Check reports a role or groups path that cannot be read, naming its
// setting, so start-up refuses it rather than every sign-in.
func (c Claims) Check() error {
	c = c.withDefaults()
	var errs []error
	if _, err := parseClaimPath(c.Role); err != nil {
		errs = append(errs, configError("FACADE_ROLE_CLAIM: "+err.Error()))
	}
	if _, err := parseClaimPath(c.Groups); err != nil {
		errs = append(errs, configError("FACADE_GROUPS_CLAIM: "+err.Error()))
	}
	return errors.Join(errs...)
}

// Limits on what a token may make of a principal: an id or group name
// with control characters could forge log lines or collide with keys built
// from it. Groups are bounded only against a hostile token: 2048 is ten
// times what Microsoft Entra puts in a token (200, then an overage claim),
// so no real person's group is dropped, and a decision over that many
// groups stays cheap (docs/signin.md, docs/performance.md "auth").
const (
	maxNameLen = 256
	maxGroups  = 2048
)

var errNoUser = errors.New("the user claim is missing or not a usable id")

// principal reads claims into a Principal. The user claim is required; a
// role that is absent or not a string means "no role", not an error
// (docs/contract.md §3); a role claim that is a list gives each role of it
// the grade rules know (roles); groups are a list of strings (or one
// string), and entries that are not usable names are left out. Groups the
// provider could not fit into the token (overage) leave the principal
// without groups and GroupsIncomplete.
func (c Claims) principal(claims map[string]any) (facade.Principal, error) {
	c = c.withDefaults()
	id, _ := claims[c.User].(string)
	if !usableName(id) {
		return facade.Principal{}, errNoUser
	}
	rolePath, err := parseClaimPath(c.Role)
	if err != nil {
		return facade.Principal{}, err
	}
	groupsPath, err := parseClaimPath(c.Groups)
	if err != nil {
		return facade.Principal{}, err
	}
	p := facade.Principal{ID: id}
	p.Role, p.Roles = roles(rolePath.lookup(claims))
	gv := groupsPath.lookup(claims)
	p.Groups = groups(gv)
	p.GroupsIncomplete = gv == nil && overage(claims, groupsPath)
	return p, nil
}

// maxRoles bounds the roles read from a list: Keycloak lists a handful.
const maxRoles = 64

// roles reads a role claim: a string is the role as it is (when it is a
// usable name, known to the grade rules or not); a list gives each role
// of it the grade rules know, in its order (Keycloak's realm_access.roles
// also holds offline_access, uma_authorization and the like, which mean
// nothing here). Role is the first; Roles all of them when there are
// several.
func roles(v any) (role string, all []string) {
	switch r := v.(type) {
	case string:
		if usableName(r) {
			return r, nil
		}
		return "", nil
	case []any:
		for i, x := range r {
			if i >= maxRoles {
				break
			}
			s, _ := x.(string)
			if (s == facade.RoleStudent || s == facade.RoleProfessor) && !slices.Contains(all, s) {
				all = append(all, s)
			}
		}
	}
	switch len(all) {
	case 0:
		return "", nil
	case 1:
		return all[0], nil
	}
	return all[0], all
}

// overage reports Microsoft Entra's groups overage: a person in more
// groups than fit in a token gets "_claim_names": {"groups": "src1"} (and
// "_claim_sources") instead of the groups claim, or, from the implicit
// flow, "hasgroups": true.
func overage(claims map[string]any, groupsPath claimPath) bool {
	if b, _ := claims["hasgroups"].(bool); b {
		return true
	}
	names, _ := claims["_claim_names"].(map[string]any)
	_, ok := names[groupsPath[0]]
	return ok
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

// warnOverage logs that principal signed in (or sent a token) without its
// groups because the provider had too many to fit (overage): group grants
// fail for it until the provider sends them (docs/signin.md, "Groups overage").
func warnOverage(ctx context.Context, log *slog.Logger, principal string) {
	log.WarnContext(ctx, "groups overage: the provider had more groups than fit in the token, so the principal has none here and group grants cannot be checked",
		"principal", principal)
}
