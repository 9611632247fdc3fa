package problem

import (
	"maps"
	"slices"

	"github.com/facade-dev/facade"
)

// Words is what the browser page says to a person about one code, from
// its entry in the table: web/static/js/words.js is written from these
// (`go generate ./web`, tools/gencodes), so the page never words a code
// the table does not hold, nor the other way round.
type Words struct {
	Code  string            // the wire code
	Say   string            // what to do next; "" for a code answered only per gradebook row
	Row   string            // for a gradebook row refused with this code; "" when none is
	Rules map[string]string // finer words by the wire rule in the body's errors; nil when none
}

// PageWords lists every code's words, in the order errors.go declares
// the codes.
func PageWords() []Words {
	var out []Words
	for _, c := range facade.Codes() {
		kind := problems[c]
		w := Words{Code: Wire(c), Say: kind.words, Row: kind.rowWords}
		if len(kind.reasonWords) > 0 {
			w.Rules = map[string]string{}
			for r, s := range kind.reasonWords {
				w.Rules[Wire(r)] = s
			}
		}
		out = append(out, w)
	}
	return out
}

// RuleNames are the wire rules of w's finer words, sorted.
func (w Words) RuleNames() []string { return slices.Sorted(maps.Keys(w.Rules)) }
