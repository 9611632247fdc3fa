package grades

import (
	"bytes"
	"testing"
)

// TestSafeCellQuotesFormulaStarts: every first character a spreadsheet
// runs as a formula is quoted, and reading undoes exactly that.
func TestSafeCellQuotesFormulaStarts(t *testing.T) {
	for in, want := range map[string]string{
		"=1+1": "'=1+1", "+A": "'+A", "-x": "'-x", "@SUM(A1)": "'@SUM(A1)", "\tx": "'\tx", "\rx": "'\rx",
		"alice": "alice", "A-": "A-", "": "", "'quoted": "'quoted",
	} {
		if got := SafeCell(in); got != want {
			t.Errorf("SafeCell(%q) = %q, want %q", in, got, want)
		}
		if back := unsafeCell(SafeCell(in)); back != in {
			t.Errorf("unsafeCell(SafeCell(%q)) = %q", in, back)
		}
	}
}

// TestGradebookRoundTrip: a download of ids that start like formulas reads
// back as the same ids.
func TestGradebookRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteGradebook(&buf, []GradebookEntry{{StudentID: "-rm"}, {StudentID: "@home"}, {StudentID: "plain"}}); err != nil {
		t.Fatal(err)
	}
	if want := "student_id,grade,version,updated_at,updated_by,posted\n'-rm,,,,,\n'@home,,,,,\nplain,,,,,\n"; buf.String() != want {
		t.Fatalf("written %q, want %q", buf.String(), want)
	}
	rows, err := ReadGradebook(bytes.NewReader(buf.Bytes()))
	if err != nil || len(rows) != 3 || rows[0].StudentID != "-rm" || rows[1].StudentID != "@home" || rows[0].Problem != nil || rows[2].Line != 4 {
		t.Fatalf("read back: %+v %v", rows, err)
	}
}
