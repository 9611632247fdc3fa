package compiled

import (
	"encoding/csv"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/casbin/casbin/v2"
	"github.com/casbin/casbin/v2/model"
	"github.com/casbin/casbin/v2/persist"

	facade "github.com/facade-dev/facade"
	"github.com/facade-dev/facade/authz/internal/policytest"
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
		got, _, problem := SplitCSV(line)
		rd := csv.NewReader(strings.NewReader(line))
		rd.Comma, rd.Comment, rd.TrimLeadingSpace = ',', '#', true
		want, err := rd.Read()
		if (err != nil) != (problem != "") || (err == nil && !slices.Equal(got, want)) {
			t.Fatalf("%q: split %q (%s), encoding/csv %q (%v)", line, got, problem, want, err)
		}
	})
}

// FuzzPolicyLineMeansWhatCasbinReads: a line parseRule accepts is the rule
// stock casbin's file adapter loads from it (persist.LoadPolicyLine),
// field for field, quotes and all; a line casbin cannot read is refused.
// So a group name, however quoted, means in the service what it means to
// casbin's own tools.
func FuzzPolicyLineMeansWhatCasbinReads(f *testing.F) {
	for _, s := range []string{
		"p, bob, class:english-101, view", `p, "group:Domain Users", account:1001, view_account`,
		`p, "group:a,b", project:P, view`, `p, "group:say ""hi""", project:P, view`, `p, "group:x ", project:P, view`,
		"p, group:acme:payments, account:1, view_account", `g, "group:a""", "group:b"`, `p, "group:x" , a, b`,
		`p, group:x", a, b`, "g, alice, \"role:prof\tessor\"",
	} {
		f.Add(s)
	}
	m, err := model.NewModelFromString(policytest.ShippedModel(f))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, line string) {
		line = strings.TrimSpace(line)
		if strings.ContainsAny(line, "\r\n") || line == "" || line[0] == '#' {
			return // parsePolicy hands parseRule single, trimmed, non-comment lines
		}
		m.ClearPolicy()
		casbinErr := func() (err error) {
			defer func() {
				if recover() != nil {
					err = errors.New("casbin panicked")
				}
			}()
			return persist.LoadPolicyLine(line, m)
		}()
		r, msg := parseRule(line, m)
		if msg != "" {
			return // refusing more than casbin is allowed (empty fields, unknown types)
		}
		if casbinErr != nil {
			t.Fatalf("%q: accepted as %q, but casbin fails: %v", line, r.Fields, casbinErr)
		}
		loaded, _ := m.GetPolicy(r.Type[:1], r.Type)
		if len(loaded) != 1 || !slices.Equal(loaded[0], r.Fields) {
			t.Fatalf("%q: read as %s %q, casbin loads %q", line, r.Type, r.Fields, loaded)
		}
	})
}

// FuzzGroupNameGrantsOnlyItself: a line granting group:A, quoted as ops
// write it, reads back as group:A, and grants a token carrying B exactly
// when B is A (and A is a name a token can carry).
func FuzzGroupNameGrantsOnlyItself(f *testing.F) {
	for _, s := range [][2]string{{"Domain Users", "Domain"}, {"a,b", "a"}, {`x"`, `x""`}, {"x ", "x"}, {"acme:payments", "acme:payments"}, {"*", "devs"}} {
		f.Add(s[0], s[1])
	}
	m, err := model.NewModelFromString(policytest.ShippedModel(f))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if !facade.ValidGroupName(a) {
			return
		}
		line := "p, " + policytest.CSVField(GroupPrefix+a) + ", project:P, view"
		r, msg := parseRule(line, m)
		if msg != "" || r.Fields[0] != GroupPrefix+a {
			t.Fatalf("%q: read as %q (%s)", line, r.Fields, msg)
		}
		s := &shape{subRole: GroupRole, objEq: true, actEq: true}
		x, err := newIndex(s, []Rule{r})
		if err != nil {
			t.Fatal(err)
		}
		want := a == b
		if got := x.enforce(SubjectWith("mallory", []string{b}), "project:P", "view"); got != want {
			t.Fatalf("line %q, token group %q: %v", line, b, got)
		}
	})
}

// TestLinesLongerThanCasbinReadsAreRefused: casbin's file adapter fails
// the whole file on a line past its scanner's 64 KiB (a comment too), so
// ParsePolicy refuses it, naming the line; one byte less loads in both.
func TestLinesLongerThanCasbinReadsAreRefused(t *testing.T) {
	for _, c := range []struct {
		line   string
		refuse bool
	}{
		{"# " + strings.Repeat("x", maxLineBytes-2), false},
		{"# " + strings.Repeat("x", maxLineBytes-1), true},
		{"p, alice, account:1001, view_account" + strings.Repeat(" ", maxLineBytes), true},
	} {
		lines := []string{"p, bob, account:1, view_account", c.line, "p, bob, account:2, view_account"}
		modelPath, policyPath := policytest.Files(t, lines...)
		_, stockErr := casbin.NewEnforcer(modelPath, policyPath)
		_, problems := compileTexts(policytest.ShippedModel(t), strings.Join(lines, "\n")+"\n")
		if HasErrors(problems) != c.refuse || (stockErr != nil) != c.refuse {
			t.Errorf("a line of %d bytes: service %v, stock casbin %v", len(c.line), problems, stockErr)
		}
		if c.refuse && (problems[0].Line != 2 || !strings.Contains(problems[0].Msg, "at most 65535 bytes")) {
			t.Errorf("a line of %d bytes: %v", len(c.line), problems[0])
		}
	}
}
