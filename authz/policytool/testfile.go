package policytool

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"

	facade "github.com/facade-dev/facade"
	"github.com/facade-dev/facade/authz/compiled"
)

// TestResult is the outcome of a `policy test` file.
type TestResult struct {
	Cases      int
	Mismatches []string // "file:line: want allow, got deny: sub obj act" and explain's reasoning
}

// RunTests checks a file of expected decisions, one per line, blank lines
// and # comments aside, in either of two forms:
//
//	allow|deny SUB OBJ ACT                     SUB is ID or ID+group:NAME+...
//	allow|deny, SUB, OBJ, ACT[, group:NAME]... the CSV form, quoted as policy.csv is
//
// Each is the casbin question (sub, obj, act), as stock casbin answers it,
// asked as SUB carrying the named groups in its token: carol+group:devs
// asks as carol, a member of group:devs. A group name with a space, '+' or
// ',' needs the CSV form ("deny, carol, account:1, view_account, \"group:Domain
// Users\""). A malformed line is an error.
func (p *Policy) RunTests(path string, data []byte) (TestResult, error) {
	var res TestResult
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		want, q, obj, act, msg := parseTestLine(line)
		if msg != "" {
			return res, fmt.Errorf("%s:%d: %s", path, n, msg)
		}
		res.Cases++
		x := p.pol.Explain(q, obj, act)
		if x.Allow == (want == "allow") {
			continue
		}
		got := map[bool]string{true: "allow", false: "deny"}[x.Allow]
		m := fmt.Sprintf("%s:%d: want %s, got %s: %s", path, n, want, got, line)
		for _, l := range x.Lines() {
			m += "\n    " + l
		}
		res.Mismatches = append(res.Mismatches, m)
	}
	return res, sc.Err()
}

// testLineForms is what a malformed test line is told.
const testLineForms = `expected "allow|deny SUB[+group:NAME...] OBJ ACT" or, for group names with a space, '+' or ',', the CSV form "allow|deny, SUB, OBJ, ACT, \"group:NAME\"..."`

// parseTestLine reads one line of a test file (see RunTests); msg says
// what is wrong with a malformed one.
func parseTestLine(line string) (want string, q compiled.Subject, obj, act, msg string) {
	var id string
	var names []string
	if strings.ContainsAny(line, `,"`) {
		f, _, problem := compiled.SplitCSV(line)
		if problem != "" {
			return "", q, "", "", problem + "; " + testLineForms
		}
		if len(f) < 4 {
			return "", q, "", "", testLineForms
		}
		want, id, obj, act = f[0], f[1], f[2], f[3]
		for _, g := range f[4:] {
			name, ok := strings.CutPrefix(g, compiled.GroupPrefix)
			if !ok || !facade.ValidGroupName(name) {
				return "", q, "", "", fmt.Sprintf("%q: each field after ACT is group:NAME, NAME 1 to %d printable characters", g, facade.MaxGroupNameLen)
			}
			names = append(names, name)
		}
	} else {
		f := strings.Fields(line)
		if len(f) != 4 {
			return "", q, "", "", testLineForms
		}
		want, obj, act = f[0], f[2], f[3]
		var rest string
		id, rest, _ = strings.Cut(f[1], "+")
		if rest != "" {
			for _, g := range strings.Split(rest, "+") {
				name, ok := strings.CutPrefix(g, compiled.GroupPrefix)
				if !ok || !facade.ValidGroupName(name) {
					return "", q, "", "", fmt.Sprintf("%q: SUB is ID or ID+group:NAME+...", f[1])
				}
				names = append(names, name)
			}
		}
	}
	switch {
	case want != "allow" && want != "deny":
		return "", q, "", "", testLineForms
	case id == "" || obj == "" || act == "":
		return "", q, "", "", "SUB, OBJ and ACT must not be empty; " + testLineForms
	}
	return want, compiled.SubjectWith(id, names), obj, act, ""
}
