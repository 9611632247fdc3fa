package server

import (
	"errors"
	"testing"

	"github.com/facade-dev/facade"
)

// TestDecodeObjectRefusals: what a JSON body may be, and the 400 for what
// it may not (docs/contract.md §2).
func TestDecodeObjectRefusals(t *testing.T) {
	for _, tc := range []struct {
		body string
		ok   bool
	}{
		{`{"grade":"B+"}`, true},
		{` {"grade":"B+"} ` + "\r\n", true},
		{`{}`, true},
		{`{"grade":null}`, true},
		{``, false},
		{`null`, false},
		{`[]`, false},
		{`"grade"`, false},
		{`{"Grade":"B+"}`, false},
		{`{"grade":"B+","grade":"A"}`, false},
		{`{"grade":"B+","note":"x"}`, false},
		{`{"grade":5}`, false},
		{`{"grade":"B+"`, false},
		{`{"grade":"B+"}{}`, false},
		{`{"grade":"B+"}]`, false},
		{`{"grade":"B+"} x`, false},
	} {
		var b gradeBody
		err := decodeObject([]byte(tc.body), &b)
		if tc.ok != (err == nil) || (err != nil && !errors.Is(err, facade.ErrMalformedBody)) {
			t.Errorf("%q: %v", tc.body, err)
		}
	}
}
