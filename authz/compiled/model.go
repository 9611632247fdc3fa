package compiled

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/casbin/casbin/v2/constant"
	"github.com/casbin/casbin/v2/model"
)

// shape is a model.conf this package can decide with its own index (see
// index.go) with the same results as casbin's Enforce. It is recognized from
// the model's definitions and the matcher parsed as casbin parses it
// (matcher.go), never assumed: a model that does not fit is decided by
// casbin itself (casbin.go), slower, never approximately.
//
// The recognized families are every combination of
//
//	[request_definition]  r = sub, obj, act
//	[policy_definition]   p = sub, obj, act            (or sub, obj, act, eft)
//	[role_definition]     g = _, _ (and g2 = _, _ ...)
//	[policy_effect]       some(where (p.eft == allow))
//	                   or some(where (p.eft == allow)) && !some(where (p.eft == deny))
//	[matchers]            m = a conjunction (&&, in any order and grouping) of
//	                        !regexMatch(r.sub, "RE")                 (optional guard)
//	                        a subject term, an object term, an action term
//
// where each term is one alternative or several joined by || (parenthesized,
// as && binds tighter), all about the same column X of sub, obj, act:
//
//	r.X == p.X              equality
//	G(r.X, p.X)             a role definition (sub and obj)
//	F(r.obj, p.obj)         keyMatch, keyMatch2, keyMatch3, globMatch or regexMatch (obj)
//	p.X == "LITERAL"        a line whose X is LITERAL matches any request ("*" for admins)
//
// with at most one G and one F per term.
type shape struct {
	guard    *regexp.Regexp // !regexMatch(r.sub, RE): a sub RE matches is never allowed; nil: none
	guardSrc string
	subEq    bool     // r.sub == p.sub
	subRole  string   // G(r.sub, p.sub), or ""
	subLits  []string // p.sub == "L"
	objEq    bool
	objRole  string
	objMatch string // F(r.obj, p.obj), or ""
	objLits  []string
	actEq    bool
	actLits  []string
	eft      bool // p has an eft column
	denyWins bool // the allow-and-deny effect
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
	if lits := len(s.subLits) + len(s.objLits) + len(s.actLits); lits > 0 {
		parts = append(parts, "literal grants ("+strings.Join(slices.Concat(s.subLits, s.objLits, s.actLits), ", ")+")")
	}
	if s.denyWins {
		parts = append(parts, "deny rules")
	}
	if len(parts) == 0 {
		return "plain ACL"
	}
	return strings.Join(parts, ", ")
}

// recognize returns the shape of m, or why m is outside the recognized
// families (then casbin decides).
func recognize(m model.Model) (*shape, string) {
	if len(m["p"]) != 1 || len(m["r"]) != 1 || len(m["e"]) != 1 || len(m["m"]) != 1 {
		return nil, "more than one request, policy, effect or matcher definition"
	}
	if !slices.Equal(m["r"]["r"].Tokens, []string{"r_sub", "r_obj", "r_act"}) {
		return nil, "request_definition is not r = sub, obj, act"
	}
	s := &shape{}
	switch pt := m["p"]["p"].Tokens; {
	case slices.Equal(pt, []string{"p_sub", "p_obj", "p_act"}):
	case slices.Equal(pt, []string{"p_sub", "p_obj", "p_act", "p_eft"}):
		s.eft = true
	default:
		return nil, "policy_definition is not p = sub, obj, act[, eft]"
	}
	for key, ast := range m["g"] {
		if len(ast.Tokens) != 2 || len(ast.ParamsTokens) != 0 {
			return nil, "role definition " + key + " is not _, _"
		}
	}
	// casbin's effector compares the effect text exactly.
	switch defValue(m, "e", "e") {
	case constant.AllowOverrideEffect:
	case constant.AllowAndDenyEffect:
		s.denyWins = true
	default:
		return nil, "policy_effect is neither allow-override nor allow-and-deny"
	}
	e, err := parseMatcher(m)
	if err != nil {
		return nil, "the matcher is not one the index decides (" + strings.TrimPrefix(err.Error(), errUnsupported.Error()+": ") + ")"
	}
	if reason := s.matcher(m, e); reason != "" {
		return nil, reason
	}
	return s, ""
}

// matcher fills s from the matcher's conjunction of terms.
func (s *shape) matcher(m model.Model, e *expr) string {
	have := map[string]bool{}
	for _, term := range flatten(e, "&&") {
		if s.isGuard(term) {
			continue
		}
		col, reason := s.term(m, term)
		if reason != "" {
			return reason
		}
		if have[col] {
			return fmt.Sprintf("matcher term %s repeats a condition on %s", term, col)
		}
		have[col] = true
	}
	if !have["sub"] || !have["obj"] || !have["act"] {
		return "matcher does not constrain each of sub, obj and act"
	}
	return ""
}

// isGuard takes !regexMatch(r.sub, "RE") once.
func (s *shape) isGuard(e *expr) bool {
	if e.op != "!" || s.guard != nil {
		return false
	}
	c := e.args[0]
	if c.op != "call" || c.name != "regexMatch" || len(c.args) != 2 || !c.args[0].is("var", "r_sub") || c.args[1].op != "str" {
		return false
	}
	re, err := regexp.Compile(c.args[1].name)
	if err != nil {
		return false // casbin fails on every question: it decides that itself
	}
	s.guard, s.guardSrc = re, c.args[1].name
	return true
}

func (e *expr) is(op, name string) bool { return e.op == op && e.name == name }

// term reads one conjunct: alternatives joined by || about one column.
func (s *shape) term(m model.Model, e *expr) (string, string) {
	var col string
	var eq bool
	var role, fn string
	var lits []string
	for _, alt := range flatten(e, "||") {
		c, kind, value := alternative(m, alt)
		if c == "" || (col != "" && c != col) {
			return "", fmt.Sprintf("matcher term %s is not one the index decides", e)
		}
		col = c
		switch {
		case kind == "eq":
			eq = true
		case kind == "lit":
			if !slices.Contains(lits, value) {
				lits = append(lits, value)
			}
		case kind == "role" && (role == "" || role == value) && col != "act":
			role = value
		case kind == "fn" && (fn == "" || fn == value) && col == "obj":
			fn = value
		default:
			return "", fmt.Sprintf("matcher term %s is not one the index decides", e)
		}
	}
	switch col {
	case "sub":
		s.subEq, s.subRole, s.subLits = eq, role, lits
	case "obj":
		s.objEq, s.objRole, s.objMatch, s.objLits = eq, role, fn, lits
	case "act":
		s.actEq, s.actLits = eq, lits
	}
	return col, ""
}

// alternative classifies one alternative of a term: its column and kind
// (eq, lit, role, fn) with the literal, role or function.
func alternative(m model.Model, e *expr) (col, kind, value string) {
	switch e.op {
	case "==":
		a, b := e.args[0], e.args[1]
		if b.op == "var" && a.op != "var" {
			a, b = b, a
		}
		if a.op != "var" {
			return "", "", ""
		}
		ra, pa := columnOf(a.name)
		switch {
		case b.op == "var" && ra != pa:
			rb, pb := columnOf(b.name)
			if ra != "" && pb == ra && rb == "" || pa != "" && rb == pa && pb == "" {
				return ra + pa, "eq", ""
			}
		case b.op == "str" && pa != "":
			return pa, "lit", b.name
		}
	case "call":
		if len(e.args) != 2 || e.args[0].op != "var" || e.args[1].op != "var" {
			return "", "", ""
		}
		r, _ := columnOf(e.args[0].name)
		_, p := columnOf(e.args[1].name)
		if r == "" || r != p {
			return "", "", ""
		}
		if _, ok := m["g"][e.name]; ok {
			return r, "role", e.name
		}
		if matchFuncs[e.name] {
			return r, "fn", e.name
		}
	}
	return "", "", ""
}

// columnOf splits a variable into its request or policy column.
func columnOf(v string) (r, p string) {
	switch v {
	case "r_sub", "r_obj", "r_act":
		return v[2:], ""
	case "p_sub", "p_obj", "p_act":
		return "", v[2:]
	}
	return "", ""
}

func defValue(m model.Model, sec, key string) string {
	if ast, ok := m[sec][key]; ok {
		return ast.Value
	}
	return ""
}
