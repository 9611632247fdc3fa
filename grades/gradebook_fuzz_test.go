package grades

import (
	"bytes"
	"errors"
	"slices"
	"testing"
	"testing/iotest"

	"github.com/facade-dev/facade"
)

// FuzzReadGradebook: an upload read as it streams, one byte per read as a
// slow client sends it, reads exactly as the same bytes held whole: the
// same rows with the same problems and lines, or the same refusal; rows
// come in line order after the header; and a file is either rows or a
// refusal of the whole, never both.
func FuzzReadGradebook(f *testing.F) {
	for _, s := range []string{
		"student_id,grade,version\nalice,A,1\n",
		"\uFEFFstudent_id;grade;version\r\nalice;A-;\r\nbob;B;2\r\n",
		"student_id,grade,version,grade\n",
		"version,student_id,grade\n\"al,ice\",A,1\nalice,A,1\nalice,B,\n",
		"student_id,grade,version\n\"alice,A\n",
		"student_id,grade\nalice,A\n",
		"student_id,grade,version\n'-rm,A,3\n'@home,,\n",
		"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		whole, errWhole := ReadGradebook(bytes.NewReader(body))
		slow, errSlow := ReadGradebook(iotest.OneByteReader(bytes.NewReader(body)))
		if (errWhole == nil) != (errSlow == nil) || facade.CodeOf(errWhole) != facade.CodeOf(errSlow) {
			t.Fatalf("%q: whole %v, streamed %v", body, errWhole, errSlow)
		}
		if errWhole != nil {
			var fe *facade.Error
			if whole != nil || !errors.As(errWhole, &fe) || fe.Code != facade.ErrBadGradebook.Code {
				t.Fatalf("%q: refused with rows, or not as a gradebook: %v", body, errWhole)
			}
			return
		}
		same := slices.EqualFunc(whole, slow, func(a, b GradebookRow) bool {
			return a.Line == b.Line && a.StudentID == b.StudentID && a.Grade == b.Grade &&
				(a.Version == nil) == (b.Version == nil) && (a.Problem == nil) == (b.Problem == nil)
		})
		if !same {
			t.Fatalf("%q: whole %+v, streamed %+v", body, whole, slow)
		}
		for i := range whole {
			if whole[i].Line < 2 || i > 0 && whole[i].Line <= whole[i-1].Line {
				t.Fatalf("%q: row %d on line %d", body, i, whole[i].Line)
			}
		}
	})
}
