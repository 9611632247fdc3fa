package authz

import (
	"encoding/csv"
	"slices"
	"strings"
	"testing"
)

// FuzzSplitCSVReadsLinesAsCasbinDoes: the quick split of a policy line
// gives exactly the fields casbin's CSV reading gives.
func FuzzSplitCSVReadsLinesAsCasbinDoes(f *testing.F) {
	for _, s := range []string{"p, bob, class:english-101, view", "g,\talice , team:a", "p,,x", " p , a\u00a0,b", `p, "a,b", c`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if strings.ContainsAny(line, "\r\n") || line == "" || line[0] == '#' {
			return // parsePolicy hands parseRule single, non-comment lines
		}
		got, problem := splitCSV(line)
		rd := csv.NewReader(strings.NewReader(line))
		rd.Comma, rd.Comment, rd.TrimLeadingSpace = ',', '#', true
		want, err := rd.Read()
		if (err != nil) != (problem != "") || (err == nil && !slices.Equal(got, want)) {
			t.Fatalf("%q: split %q (%s), encoding/csv %q (%v)", line, got, problem, want, err)
		}
	})
}
