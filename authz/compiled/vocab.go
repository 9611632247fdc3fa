package compiled

import (
	"strings"

	"github.com/casbin/casbin/v2/model"
	"github.com/casbin/govaluate"
)

// Vocabulary is what a matcher makes valid in a p column beyond the
// service's own actions and objects: values it names as literals
// (p.act == "*" makes "p, role:admin, *, *" mean every action), and the
// matching functions that read the column as a pattern.
type Vocabulary struct {
	lits map[string]map[string]bool // column (sub, obj, act) -> literal values
	fns  map[string][]string        // column -> functions taking p.column as their pattern
	// Guarded: the matcher says !regexMatch(r.sub, ":"), so no token's sub
	// with a colon is ever allowed, and a name with one (team:x) is a
	// group, which only g lines give members.
	Guarded bool
}

// VocabularyOf reads m's matcher with casbin's lexer. A matcher casbin
// cannot read names nothing.
func VocabularyOf(m model.Model) Vocabulary {
	v := Vocabulary{lits: map[string]map[string]bool{}, fns: map[string][]string{},
		Guarded: strings.Contains(strings.Join(strings.Fields(defValue(m, "m", "m")), ""), `!regexMatch(r_sub,":")`)}
	tokens, err := lexMatcher(m)
	if err != nil {
		return v
	}
	str := func(t govaluate.ExpressionToken, kind govaluate.TokenKind) string {
		s, _ := t.Value.(string)
		if t.Kind != kind {
			return ""
		}
		return s
	}
	for i := range tokens {
		// p.X == "L", "L" == p.X (and !=): L is a value the matcher names.
		if i+2 < len(tokens) && tokens[i+1].Kind == govaluate.COMPARATOR {
			for _, pair := range [][2]govaluate.ExpressionToken{{tokens[i], tokens[i+2]}, {tokens[i+2], tokens[i]}} {
				if _, col := columnOf(str(pair[0], govaluate.VARIABLE)); col != "" && pair[1].Kind == govaluate.STRING {
					if v.lits[col] == nil {
						v.lits[col] = map[string]bool{}
					}
					v.lits[col][str(pair[1], govaluate.STRING)] = true
				}
			}
		}
		// F(x, p.X): F reads p.X as a pattern.
		if i+5 < len(tokens) && tokens[i].Kind == govaluate.FUNCTION && tokens[i+1].Kind == govaluate.CLAUSE &&
			tokens[i+3].Kind == govaluate.SEPARATOR && tokens[i+5].Kind == govaluate.CLAUSE_CLOSE {
			fn, _ := tokens[i].Value.(govaluate.ExpressionFunction)
			name, _ := fn()
			if _, col := columnOf(str(tokens[i+4], govaluate.VARIABLE)); col != "" && matchFuncs[name.(string)] {
				v.fns[col] = append(v.fns[col], name.(string))
			}
		}
	}
	return v
}

// Names reports whether value is valid in column col by the matcher: a
// literal it Names, or a pattern (matching more than one key) of a
// function it applies to the column.
func (v Vocabulary) Names(col, value string) bool {
	if v.lits[col][value] {
		return true
	}
	for _, fn := range v.fns[col] {
		if p, err := compilePattern(fn, value); err == nil && !p.literal {
			return true
		}
	}
	return false
}
