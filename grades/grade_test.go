package grades

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/internal/testkit/testredis"
)

func TestMain(m *testing.M) { testredis.Main(m) }

// wantError fails unless err is a *facade.Error of want's code.
func wantError(t testing.TB, err error, want *facade.Error) *facade.Error {
	t.Helper()
	var fe *facade.Error
	if !errors.As(err, &fe) || !errors.Is(err, want) {
		t.Fatalf("error = %v (%T), want code %q", err, err, want.Code)
	}
	return fe
}

func TestParseGradeAcceptsExactlyTheScale(t *testing.T) {
	for _, g := range Scale() {
		got, err := parseGradeText(g)
		if err != nil || got != g {
			t.Errorf("ParseGrade(%q) = %q, %v; want %q, nil", g, got, err, g)
		}
	}
	if len(Scale()) != 13 {
		t.Fatalf("Scale has %d grades, the contract lists 13", len(Scale()))
	}
}

func TestParseGradeRefusesEverythingElse(t *testing.T) {
	for _, s := range []string{
		"a+", "b", "f", " A", "A ", "A\n", "\tB", "E", "", "A++", "F-", "F+", "+A", "AB",
		"Α",  // Greek capital alpha
		"Ａ",  // full-width A
		"Ａ+", // full-width A, ASCII plus
		"A＋", // ASCII A, full-width plus
		"A−", // Unicode minus sign
		"A‐", // Unicode hyphen
		"A\x00",
		strings.Repeat("A", 1000),
	} {
		got, err := parseGradeText(s)
		if got != "" {
			t.Errorf("ParseGrade(%q) returned %q alongside its error", s, got)
		}
		wantError(t, err, facade.ErrBadGrade)
	}
}

// Scale's slice is the caller's; the rule must not move with it.
func TestParseGradeIgnoresChangesToScale(t *testing.T) {
	s := Scale()
	s[0] = "Z"
	if _, err := parseGradeText("Z"); err == nil {
		t.Fatal("ParseGrade accepted a grade written into Scale at run time")
	}
	if _, err := parseGradeText("A+"); err != nil {
		t.Fatalf("ParseGrade(A+) after Scale was changed: %v", err)
	}
	if Scale()[0] != "A+" {
		t.Fatal("a change to Scale's slice reached the next caller's")
	}
}

func FuzzParseGrade(f *testing.F) {
	for _, s := range append(Scale(), "", "a+", " A", "A++", "Α", "Ａ", "E") {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := parseGradeText(s)
		if err != nil {
			wantError(t, err, facade.ErrBadGrade)
			return
		}
		if got != s || !slices.Contains(Scale(), got) {
			t.Fatalf("ParseGrade(%q) accepted %q, which is not that string or not in Scale", s, got)
		}
		g, _ := ParseGrade(s)
		if again, err := ParseGrade(g.String()); err != nil || again != g {
			t.Fatalf("ParseGrade(%q): its String does not parse back to the same grade", s)
		}
	})
}
