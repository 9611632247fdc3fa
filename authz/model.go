package authz

import (
	"fmt"
	"strings"

	"github.com/casbin/casbin/v2/model"
	"github.com/casbin/casbin/v2/util"
)

// shape is a model.conf this package can decide with its own index (see
// index.go) with the same results as casbin's Enforce. It is recognized from
// the model's definitions, never assumed: a model that does not fit is
// decided by casbin itself (engine.go), slower.
//
// The recognized families are every combination of
//
//	[request_definition]  r = sub, obj, act
//	[policy_definition]   p = sub, obj, act            (or sub, obj, act, eft)
//	[role_definition]     g = _, _ (and g2 = _, _ ...: no domains)
//	[policy_effect]       some(where (p.eft == allow))
//	                   or some(where (p.eft == allow)) && !some(where (p.eft == deny))
//	[matchers]            m = T && T && ... (any order) with the terms
//	                        !regexMatch(r.sub, ":")                 (optional guard)
//	                        g(r.sub, p.sub) | r.sub == p.sub        (subject)
//	                        r.obj == p.obj | G | F | (G || F)       (object)
//	                          G: g(r.obj, p.obj)   F: keyMatch, keyMatch2 or globMatch(r.obj, p.obj)
//	                        r.act == p.act                          (action)
type shape struct {
	guard    bool   // !regexMatch(r.sub, ":"): a sub with a colon is never allowed
	subRole  string // the g that takes r.sub to p.sub; "" for r.sub == p.sub
	objRole  string // the g that takes r.obj to p.obj; "" when none
	objMatch string // keyMatch, keyMatch2, globMatch, or "" for none
	eft      bool   // p has an eft column
	denyWins bool   // the allow-and-deny effect
}

// matchFuncs are the wildcard functions the index evaluates with casbin's own code.
var matchFuncs = map[string]func(key1, key2 string) bool{
	"keyMatch":  util.KeyMatch,
	"keyMatch2": util.KeyMatch2,
	"globMatch": func(k1, k2 string) bool { ok, _ := util.GlobMatch(k1, k2); return ok },
}

// specials are, per function, the characters that make a p.obj a pattern
// rather than a literal (a literal matches only itself).
var specials = map[string]string{
	"keyMatch":  "*",
	"keyMatch2": `*:.()[]{}?+^$|\`,
	"globMatch": `*?[]{}\`,
}

// String names the family for policy check, /readyz and the metric.
func (s *shape) String() string {
	var parts []string
	if s.subRole != "" {
		parts = append(parts, "role hierarchy ("+s.subRole+")")
	}
	if s.objRole != "" {
		parts = append(parts, "resource groups ("+s.objRole+")")
	}
	if s.objMatch != "" {
		parts = append(parts, "wildcard objects ("+s.objMatch+")")
	}
	if s.denyWins {
		parts = append(parts, "deny rules")
	}
	if len(parts) == 0 {
		return "plain ACL"
	}
	return strings.Join(parts, ", ")
}

const (
	effAllow     = "some(where(p_eft==allow))"
	effAllowDeny = "some(where(p_eft==allow))&&!some(where(p_eft==deny))"
)

// recognize returns the shape of m, or why m is outside the recognized
// families (then casbin decides).
func recognize(m model.Model) (*shape, string) {
	if squash(defValue(m, "r", "r")) != "sub,obj,act" {
		return nil, "request_definition is not r = sub, obj, act"
	}
	s := &shape{}
	switch squash(defValue(m, "p", "p")) {
	case "sub,obj,act":
	case "sub,obj,act,eft":
		s.eft = true
	default:
		return nil, "policy_definition is not p = sub, obj, act[, eft]"
	}
	for key, ast := range m["g"] {
		if squash(ast.Value) != "_,_" {
			return nil, "role definition " + key + " is not _, _ (domains are decided by casbin)"
		}
	}
	if len(m["p"]) != 1 || len(m["r"]) != 1 || len(m["e"]) != 1 || len(m["m"]) != 1 {
		return nil, "more than one request, policy, effect or matcher definition"
	}
	switch squash(defValue(m, "e", "e")) {
	case effAllow:
	case effAllowDeny:
		s.denyWins = true
	default:
		return nil, "policy_effect is neither allow-override nor allow-and-deny"
	}
	if reason := s.matcher(m, squash(defValue(m, "m", "m"))); reason != "" {
		return nil, reason
	}
	return s, ""
}

// matcher fills s from the matcher's terms; casbin stores r.sub as r_sub.
func (s *shape) matcher(m model.Model, text string) string {
	var haveSub, haveObj, haveAct bool
	for _, term := range splitTop(text, "&&") {
		term = unparen(term)
		switch {
		case term == `!regexMatch(r_sub,":")`:
			if s.guard {
				return "repeated term"
			}
			s.guard = true
		case term == "r_act==p_act":
			if haveAct {
				return "repeated term"
			}
			haveAct = true
		case !haveSub && (term == "r_sub==p_sub" || roleCall(m, term, "r_sub", "p_sub") != ""):
			haveSub = true
			s.subRole = roleCall(m, term, "r_sub", "p_sub")
		case !haveObj && s.objectTerm(m, term):
			haveObj = true
		default:
			return fmt.Sprintf("matcher term %q is not one the index decides", term)
		}
	}
	if !haveSub || !haveObj || !haveAct {
		return "matcher does not constrain each of sub, obj and act"
	}
	return ""
}

// objectTerm recognizes r.obj == p.obj, g(r.obj, p.obj), F(r.obj, p.obj)
// and (G || F) in either order.
func (s *shape) objectTerm(m model.Model, term string) bool {
	if term == "r_obj==p_obj" {
		return true
	}
	parts := splitTop(term, "||")
	if len(parts) > 2 {
		return false
	}
	for _, p := range parts {
		p = unparen(p)
		if g := roleCall(m, p, "r_obj", "p_obj"); g != "" && s.objRole == "" {
			s.objRole = g
			continue
		}
		name, ok := strings.CutSuffix(p, "(r_obj,p_obj)")
		if _, known := matchFuncs[name]; ok && known && s.objMatch == "" {
			s.objMatch = name
			continue
		}
		s.objRole, s.objMatch = "", ""
		return false
	}
	return true
}

// roleCall returns the role definition (g, g2...) when term is gN(a, b).
func roleCall(m model.Model, term, a, b string) string {
	name, ok := strings.CutSuffix(term, "("+a+","+b+")")
	if !ok {
		return ""
	}
	if _, defined := m["g"][name]; !defined {
		return ""
	}
	return name
}

// splitTop splits s on sep outside parentheses and string literals.
func splitTop(s, sep string) []string {
	var parts []string
	depth, start, quoted := 0, 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			quoted = !quoted
		case quoted:
		case c == '(':
			depth++
		case c == ')':
			depth--
		case depth == 0 && strings.HasPrefix(s[i:], sep):
			parts = append(parts, s[start:i])
			start = i + len(sep)
			i += len(sep) - 1
		}
	}
	return append(parts, s[start:])
}

// unparen strips parentheses that enclose the whole term.
func unparen(s string) string {
	for len(s) >= 2 && s[0] == '(' && s[len(s)-1] == ')' {
		depth := 0
		for i := 0; i < len(s); i++ {
			if s[i] == '(' {
				depth++
			} else if s[i] == ')' {
				depth--
				if depth == 0 && i < len(s)-1 {
					return s // "(a) && (b)": the first paren closes early
				}
			}
		}
		s = s[1 : len(s)-1]
	}
	return s
}

func defValue(m model.Model, sec, key string) string {
	if ast, ok := m[sec][key]; ok {
		return ast.Value
	}
	return ""
}

// squash removes all whitespace (outside nothing: model values the index
// recognizes contain no quoted spaces).
func squash(s string) string { return strings.Join(strings.Fields(s), "") }
