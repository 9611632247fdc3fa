package grades

import (
	"strings"
	"testing"

	"github.com/facade-dev/facade"
)

func TestETag(t *testing.T) {
	for v, want := range map[int64]string{1: `"1"`, 3: `"3"`, 1234567: `"1234567"`} {
		if got := ETag(v); got != want {
			t.Errorf("ETag(%d) = %s, want %s", v, got, want)
		}
	}
}

func TestParseIfMatch(t *testing.T) {
	valid := []struct {
		header string
		want   int64 // -1: no condition (nil)
	}{
		{"", -1},
		{"*", -1},
		{" * ", -1},
		{`"3"`, 3},
		{`W/"3"`, 3},
		{` "3"	`, 3},
		{`"0"`, 0},
		{`"1"`, 1},
		{`"9223372036854775807"`, 9223372036854775807},
	}
	for _, c := range valid {
		got, err := ParseIfMatch(c.header)
		if err != nil {
			t.Errorf("ParseIfMatch(%q): %v", c.header, err)
			continue
		}
		switch {
		case c.want == -1 && got != nil:
			t.Errorf("ParseIfMatch(%q) = %d, want no condition", c.header, *got)
		case c.want != -1 && (got == nil || *got != c.want):
			t.Errorf("ParseIfMatch(%q) = %v, want %d", c.header, got, c.want)
		}
	}

	malformed := []string{
		`3`, `"3`, `3"`, `""`, `"`, `'3'`, `"abc"`, `"03"`, `"00"`, `"-1"`, `"+3"`, `"3.0"`, `" 3"`,
		`"3 "`, `w/"3"`, `W/3`, `W/`, `W/W/"3"`, `"3", "4"`, `"3","4"`, `**`, `"*"`,
		`"9223372036854775808"`, `"١"`, // Arabic-Indic digit one
		`"` + strings.Repeat("9", 100) + `"`,
	}
	for _, h := range malformed {
		got, err := ParseIfMatch(h)
		if got != nil {
			t.Errorf("ParseIfMatch(%q) returned %d alongside its error", h, *got)
		}
		wantError(t, err, facade.ErrBadIfMatch)
	}
}

func FuzzParseIfMatch(f *testing.F) {
	for _, s := range []string{"", "*", `"3"`, `W/"3"`, `"03"`, `"-1"`, `"3", "4"`, `"9223372036854775808"`, ` "7" `} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		v, err := ParseIfMatch(h)
		if err != nil {
			wantError(t, err, facade.ErrBadIfMatch)
			return
		}
		bare := strings.Trim(h, " \t")
		if v == nil {
			if bare != "" && bare != "*" {
				t.Fatalf("ParseIfMatch(%q) = no condition", h)
			}
			return
		}
		if *v < 0 || ETag(*v) != strings.TrimPrefix(bare, "W/") {
			t.Fatalf("ParseIfMatch(%q) = %d, which ETag writes as %s", h, *v, ETag(*v))
		}
	})
}
