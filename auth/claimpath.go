package auth

import (
	"encoding/json"
	"errors"
	"strings"
)

// claimPath is FACADE_ROLE_CLAIM or FACADE_GROUPS_CLAIM read as a path into
// nested claims: names separated by dots (realm_access.roles,
// resource_access.facade.roles), a name that holds a dot or a bracket
// written as a JSON string in brackets (["https://example.com/roles"],
// resource_access["my.app"].roles). A plain name is a path of one.
type claimPath []string

var errClaimPath = errors.New(`not a claim path: names separated by dots (realm_access.roles); a name with a dot is written ["name.with.dot"]`)

// maxPathLen bounds a path's names: nesting deeper than this is no
// provider's.
const maxPathLen = 16

func parseClaimPath(s string) (claimPath, error) {
	var path claimPath
	for rest := s; ; {
		var name string
		if strings.HasPrefix(rest, "[") {
			end := quotedEnd(rest[1:])
			if end < 0 || !strings.HasPrefix(rest[1+end:], "]") {
				return nil, errClaimPath
			}
			if err := json.Unmarshal([]byte(rest[1:1+end]), &name); err != nil {
				return nil, errClaimPath
			}
			rest = rest[2+end:]
		} else {
			i := strings.IndexAny(rest, ".[")
			if i < 0 {
				i = len(rest)
			}
			name, rest = rest[:i], rest[i:]
		}
		if name == "" || len(path) == maxPathLen {
			return nil, errClaimPath
		}
		path = append(path, name)
		switch {
		case rest == "":
			return path, nil
		case strings.HasPrefix(rest, "."):
			rest = rest[1:]
			if rest == "" {
				return nil, errClaimPath
			}
		case strings.HasPrefix(rest, "["):
		default:
			return nil, errClaimPath
		}
	}
}

// quotedEnd is the length of the JSON string s starts with, quotes
// included, or -1.
func quotedEnd(s string) int {
	if !strings.HasPrefix(s, `"`) {
		return -1
	}
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// lookup follows the path through nested objects; nil when any step is
// missing or not an object.
func (p claimPath) lookup(claims map[string]any) any {
	var v any = claims
	for _, name := range p {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[name]
	}
	return v
}
