package facade

import (
	"errors"
	"regexp"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// The hand-written checks must agree with the patterns of docs/contract.md §3.
var (
	specID         = regexp.MustCompile(`^[A-Za-z0-9._@-]{1,64}$`)
	specProjectKey = regexp.MustCompile(`^[A-Z][A-Z0-9]{0,63}$`)
	specPlanKey    = regexp.MustCompile(`^[A-Z0-9]{1,64}$`)
)

func TestIdentifierFormats(t *testing.T) {
	for _, s := range []string{"", "alice", "a.b@c-d_e", "1001", "..", strings.Repeat("a", 64), strings.Repeat("a", 65),
		"a/b", "a%2Fb", "a b", "ä", "PROJ", "P1", "1P", "proj", "WEB-NIGHTLY", "NIGHTLY", strings.Repeat("A", 65), "a\x00", "A\n"} {
		if ValidID(s) != specID.MatchString(s) || ValidProjectKey(s) != specProjectKey.MatchString(s) || ValidPlanKey(s) != specPlanKey.MatchString(s) {
			t.Errorf("%q: checks disagree with the patterns of docs/contract.md §3", s)
		}
	}
}

func FuzzIdentifierFormats(f *testing.F) {
	f.Add("alice")
	f.Add("PROJ")
	f.Fuzz(func(t *testing.T, s string) {
		if ValidID(s) != specID.MatchString(s) || ValidProjectKey(s) != specProjectKey.MatchString(s) || ValidPlanKey(s) != specPlanKey.MatchString(s) {
			t.Fatalf("%q: checks disagree with the patterns of docs/contract.md §3", s)
		}
	})
}

// groupNameRule is docs/contract.md §2's group name, written plainly: 1 to
// 256 printable characters (unicode.IsGraphic) of valid UTF-8.
func groupNameRule(s string) bool {
	if s == "" || !utf8.ValidString(s) || utf8.RuneCountInString(s) > MaxGroupNameLen {
		return false
	}
	for _, r := range s {
		if !unicode.IsGraphic(r) {
			return false
		}
	}
	return true
}

// FuzzGroupNameFormat: ValidGroupName (with its fast path for printable
// ASCII) is the plain rule, for any string.
func FuzzGroupNameFormat(f *testing.F) {
	for _, s := range []string{"acme:payments", "Domain Users", "a\x7f", "\x00", "é", strings.Repeat("x", 256), strings.Repeat("x", 257), strings.Repeat("é", 256), "\xff", "a\u200bb", " "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if ValidGroupName(s) != groupNameRule(s) {
			t.Fatalf("%q: ValidGroupName %v, the rule %v", s, ValidGroupName(s), groupNameRule(s))
		}
	})
}

// FuzzParseIdentifiers: the constructors accept exactly docs/contract.md
// §3's id format, give back the text they were given, and parse their own
// String to the same value; what they refuse is the zero value and
// ErrBadIdentifier.
func FuzzParseIdentifiers(f *testing.F) {
	for _, s := range []string{"alice", "1001", "a.b@c-d_e", "", "a/b", "ä", strings.Repeat("a", 65)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		account, errA := ParseAccountID(s)
		student, errS := ParseStudentID(s)
		class, errC := ParseClassID(s)
		if specID.MatchString(s) {
			if errA != nil || errS != nil || errC != nil || account.String() != s || student.String() != s || class.String() != s {
				t.Fatalf("%q: refused or changed (%v %v %v)", s, errA, errS, errC)
			}
			again, err := ParseAccountID(account.String())
			if err != nil || again != account {
				t.Fatalf("%q: String does not parse back to the same id", s)
			}
			return
		}
		for _, err := range []error{errA, errS, errC} {
			if !errors.Is(err, ErrBadIdentifier) {
				t.Fatalf("%q: accepted against the format, or refused with %v", s, err)
			}
		}
		if !account.IsZero() || !student.IsZero() || !class.IsZero() {
			t.Fatalf("%q: a refusal that is not the zero value", s)
		}
	})
}

// FuzzParseBuildKeys: ParseProjectKey and ParsePlanKey accept exactly
// docs/contract.md §3's key formats (PROJECT, PROJECT-PLAN), give back the
// text they were given, and parse their own String to the same value.
func FuzzParseBuildKeys(f *testing.F) {
	for _, s := range []string{"PROJ", "PROJ-CORE", "WEB-NIGHTLY", "P1-2", "proj", "PROJ-", "-CORE", "PROJ-CORE-6", "PROJ-co", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		project, err := ParseProjectKey(s)
		if (err == nil) != specProjectKey.MatchString(s) || err == nil && project.String() != s || err != nil && !project.IsZero() {
			t.Fatalf("%q: ParseProjectKey %v, %v", s, project, err)
		}
		if err == nil {
			if again, err := ParseProjectKey(project.String()); err != nil || again != project {
				t.Fatalf("%q: String does not parse back to the same project key", s)
			}
		}
		head, short, cut := strings.Cut(s, "-")
		plan, err := ParsePlanKey(s)
		want := cut && specProjectKey.MatchString(head) && specPlanKey.MatchString(short)
		if (err == nil) != want || err == nil && (plan.String() != s || plan.Project().String() != head || plan.Short() != short) || err != nil && !plan.IsZero() {
			t.Fatalf("%q: ParsePlanKey %v, %v", s, plan, err)
		}
		if err == nil {
			if again, err := ParsePlanKey(plan.String()); err != nil || again != plan {
				t.Fatalf("%q: String does not parse back to the same plan key", s)
			}
		}
	})
}

// TestBuildKeysParseOnceIntoTheirShape: a build key is one of Bamboo's
// four shapes, each part of its format (docs/contract.md §3), and reads
// back as written; anything else, an encoded or path character included,
// is refused, so a BuildKey can go into an upstream URL as it is.
func TestBuildKeysParseOnceIntoTheirShape(t *testing.T) {
	for s, want := range map[string][4]string{ // project, plan, job, number
		"PROJ":             {"PROJ", "", "", ""},
		"PROJ-CORE":        {"PROJ", "PROJ-CORE", "", ""},
		"PROJ-CORE-7":      {"PROJ", "PROJ-CORE", "", "7"},
		"PROJ-CORE-latest": {"PROJ", "PROJ-CORE", "", "latest"},
		"PROJ-CORE-JOB1-7": {"PROJ", "PROJ-CORE", "JOB1", "7"},
		"A-0-Z-9999999999": {"A", "A-0", "Z", "9999999999"},
	} {
		k, err := ParseBuildKey(s)
		got := [4]string{k.Project().String(), k.Plan().String(), k.Job(), k.Number()}
		if err != nil || got != want || k.String() != s {
			t.Errorf("%q: %v %v, want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"", "proj", "1P", "PROJ-", "PROJ-core", "PROJ-CORE-", "PROJ-CORE-x", "PROJ-CORE-JOB1-latest",
		"PROJ-CORE-JOB1-", "PROJ-CORE-J-7-8", "PROJ-CORE-12345678901", "PROJ/CORE", "PROJ%2DCORE", "PROJ-CORE.json",
		"PROJ CORE", "PROJ-CORE-7?x", "PROJ-CORE#7", "../PROJ", strings.Repeat("A", 65), "PROJ-" + strings.Repeat("A", 65)} {
		if k, err := ParseBuildKey(s); !errors.Is(err, ErrBadIdentifier) || !k.IsZero() {
			t.Errorf("%q: parsed as %q (%v)", s, k, err)
		}
	}
	plan, _ := ParsePlanKey("PROJ-CORE")
	for number, ok := range map[string]bool{"6": true, "latest": true, "": false, "x": false, "-1": false, "12345678901": false} {
		k, err := plan.Result(number)
		if (err == nil) != ok || ok && (k.String() != "PROJ-CORE-"+number || k.Plan() != plan || k.Number() != number) {
			t.Errorf("PROJ-CORE result %q: %q %v", number, k, err)
		}
	}
	if _, err := (PlanKey{}).Result("6"); err == nil {
		t.Error("the zero plan has a result")
	}
}
