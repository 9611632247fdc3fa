package facade

import (
	"regexp"
	"strings"
	"testing"
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
