package compiled

import (
	"errors"
	"fmt"
	"strings"

	"github.com/casbin/casbin/v2/model"
	"github.com/casbin/govaluate"
)

// expr is a casbin matcher parsed as casbin parses it: govaluate's own
// lexer makes the tokens, and parse builds the tree with govaluate's
// precedence (! binds tightest, then == and !=, then &&, then ||;
// parentheses group). Only the forms the index can decide are parsed;
// anything else (arithmetic, in, ternaries, accessors, chains of
// comparisons) is an error, and casbin decides such a model itself.
type expr struct {
	op   string // "||", "&&", "!", "==", "!=", "call", "var", "str"
	name string // call: the function; var: the variable (r_sub...); str: the value
	args []*expr
}

// errUnsupported marks a matcher outside the parsed forms.
var errUnsupported = errors.New("not a form the index decides")

// unsupported names the token where p stopped.
func (p *parser) unsupported() error {
	if p.pos >= len(p.tokens) {
		return fmt.Errorf("%w: it ends early", errUnsupported)
	}
	t := p.tokens[p.pos]
	v := t.Value
	if f, ok := v.(govaluate.ExpressionFunction); ok {
		v, _ = f()
	}
	return fmt.Errorf("%w: it uses %s %v", errUnsupported, strings.ToLower(t.Kind.String()), v)
}

// casbinFunctions is the set of functions casbin's Enforce gives the
// matcher: its built-ins and one per role definition of m.
func casbinFunctions(m model.Model) map[string]govaluate.ExpressionFunction {
	fns := map[string]govaluate.ExpressionFunction{}
	names := []string{}
	builtins := model.LoadFunctionMap()
	for name := range builtins.GetFunctions() {
		names = append(names, name)
	}
	for name := range m["g"] {
		names = append(names, name)
	}
	for _, name := range names {
		// A marker that answers its own name: the tokens then say which
		// function each call is.
		fns[name] = func(...any) (any, error) { return name, nil }
	}
	return fns
}

// lexMatcher returns govaluate's tokens for m's matcher, with casbin's
// functions; an error is what casbin's Enforce would fail with on every
// question (an undefined function, a syntax error).
func lexMatcher(m model.Model) ([]govaluate.ExpressionToken, error) {
	e, err := govaluate.NewEvaluableExpressionWithFunctions(defValue(m, "m", "m"), casbinFunctions(m))
	if err != nil {
		return nil, err
	}
	return e.Tokens(), nil
}

// parseMatcher parses m's matcher into an expr.
func parseMatcher(m model.Model) (*expr, error) {
	tokens, err := lexMatcher(m)
	if err != nil {
		return nil, err
	}
	p := &parser{tokens: tokens}
	e, err := p.or()
	if err != nil {
		return nil, err
	}
	if p.pos != len(p.tokens) {
		return nil, p.unsupported()
	}
	return e, nil
}

type parser struct {
	tokens []govaluate.ExpressionToken
	pos    int
}

func (p *parser) peek(kind govaluate.TokenKind, value string) bool {
	if p.pos >= len(p.tokens) {
		return false
	}
	t := p.tokens[p.pos]
	if t.Kind != kind {
		return false
	}
	v, _ := t.Value.(string)
	return value == "" || v == value
}

// or := and { "||" and }; and := cmp { "&&" cmp }. Both operators are
// associative, so the grouping of a chain does not change its value.
func (p *parser) or() (*expr, error)  { return p.chain("||", p.and) }
func (p *parser) and() (*expr, error) { return p.chain("&&", p.cmp) }

func (p *parser) chain(op string, next func() (*expr, error)) (*expr, error) {
	first, err := next()
	if err != nil {
		return nil, err
	}
	args := []*expr{first}
	for p.peek(govaluate.LOGICALOP, op) {
		p.pos++
		e, err := next()
		if err != nil {
			return nil, err
		}
		args = append(args, e)
	}
	if len(args) == 1 {
		return first, nil
	}
	return &expr{op: op, args: args}, nil
}

// cmp := unary [ ("==" | "!=") unary ]; a second comparison in a row is
// outside the parsed forms.
func (p *parser) cmp() (*expr, error) {
	left, err := p.unary()
	if err != nil {
		return nil, err
	}
	if !p.peek(govaluate.COMPARATOR, "") {
		return left, nil
	}
	op, _ := p.tokens[p.pos].Value.(string)
	if op != "==" && op != "!=" {
		return nil, p.unsupported()
	}
	p.pos++
	right, err := p.unary()
	if err != nil {
		return nil, err
	}
	if p.peek(govaluate.COMPARATOR, "") {
		return nil, p.unsupported()
	}
	return &expr{op: op, args: []*expr{left, right}}, nil
}

// unary := "!" unary | primary: govaluate's ! takes the value right after
// it (a call, a variable, a literal or a parenthesized group).
func (p *parser) unary() (*expr, error) {
	if p.peek(govaluate.PREFIX, "!") {
		p.pos++
		e, err := p.unary()
		if err != nil {
			return nil, err
		}
		return &expr{op: "!", args: []*expr{e}}, nil
	}
	return p.primary()
}

func (p *parser) primary() (*expr, error) {
	if p.pos >= len(p.tokens) {
		return nil, p.unsupported()
	}
	t := p.tokens[p.pos]
	p.pos++
	switch t.Kind {
	case govaluate.VARIABLE:
		return &expr{op: "var", name: t.Value.(string)}, nil
	case govaluate.STRING:
		return &expr{op: "str", name: t.Value.(string)}, nil
	case govaluate.CLAUSE:
		e, err := p.or()
		if err != nil {
			return nil, err
		}
		if !p.peek(govaluate.CLAUSE_CLOSE, "") {
			return nil, p.unsupported()
		}
		p.pos++
		return e, nil
	case govaluate.FUNCTION:
		return p.call(t)
	}
	p.pos--
	return nil, p.unsupported()
}

// call reads a function's parenthesized arguments.
func (p *parser) call(t govaluate.ExpressionToken) (*expr, error) {
	fn, _ := t.Value.(govaluate.ExpressionFunction)
	name, _ := fn()
	e := &expr{op: "call", name: fmt.Sprint(name)}
	if !p.peek(govaluate.CLAUSE, "") {
		return nil, p.unsupported()
	}
	p.pos++
	for !p.peek(govaluate.CLAUSE_CLOSE, "") {
		if len(e.args) > 0 {
			if !p.peek(govaluate.SEPARATOR, "") {
				return nil, p.unsupported()
			}
			p.pos++
		}
		arg, err := p.or()
		if err != nil {
			return nil, err
		}
		e.args = append(e.args, arg)
	}
	p.pos++
	return e, nil
}

// flatten returns the operands of a chain of op (through nested chains
// of the same op), or e alone.
func flatten(e *expr, op string) []*expr {
	if e.op != op {
		return []*expr{e}
	}
	var out []*expr
	for _, a := range e.args {
		out = append(out, flatten(a, op)...)
	}
	return out
}

// String writes e back in casbin's syntax (for messages).
func (e *expr) String() string {
	switch e.op {
	case "var":
		return e.name
	case "str":
		return fmt.Sprintf("%q", e.name)
	case "!":
		// ! binds tightest: a comparison or a chain under it was in
		// parentheses, and must be again to mean the same.
		if a := e.args[0]; a.op == "==" || a.op == "!=" || a.op == "&&" || a.op == "||" {
			return "!(" + a.String() + ")"
		}
		return "!" + e.args[0].String()
	case "call":
		s := e.name + "("
		for i, a := range e.args {
			if i > 0 {
				s += ", "
			}
			s += a.String()
		}
		return s + ")"
	}
	parts := make([]string, len(e.args))
	for i, a := range e.args {
		parts[i] = a.String()
		if a.op == "||" || (a.op == "&&" && e.op != "||") {
			parts[i] = "(" + parts[i] + ")"
		}
	}
	return strings.Join(parts, " "+e.op+" ")
}
