package policytool

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"

	facade "github.com/facade-dev/facade"
	"github.com/facade-dev/facade/authz"
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
//	allow|deny SUB OBJ ACT                     SUB is ID or ID+group:NAME+role:R+...
//	allow|deny, SUB, OBJ, ACT[, group:NAME|role:R]... the CSV form, quoted as policy.csv is
//
// Each is the question the service asks for SUB's token carrying the named
// groups and roles, answered as the service answers it (authz's Decide:
// the grade rules with the token's and the policy's roles, a plan by its
// project too): carol+group:devs asks as carol, a member of group:devs;
// bob+role:professor as bob with a professor's token. A group name with a
// space, '+' or ',' needs the CSV form ("deny, carol, account:1,
// view_account, \"group:Domain Users\""). A malformed line is an error.
func (p *Policy) RunTests(path string, data []byte) (TestResult, error) {
	var res TestResult
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		want, pr, obj, act, msg := parseTestLine(line)
		if msg != "" {
			return res, fmt.Errorf("%s:%d: %s", path, n, msg)
		}
		res.Cases++
		allow := p.Decide(pr, obj, act)
		if allow == (want == "allow") {
			continue
		}
		got := map[bool]string{true: "allow", false: "deny"}[allow]
		m := fmt.Sprintf("%s:%d: want %s, got %s: %s", path, n, want, got, line)
		if x, err := p.Explain(pr, obj, act); err == nil {
			for _, l := range x.Lines() {
				m += "\n    " + l
			}
		}
		res.Mismatches = append(res.Mismatches, m)
	}
	return res, sc.Err()
}

// testLineForms is what a malformed test line is told.
const testLineForms = `expected "allow|deny SUB[+group:NAME...][+role:R...] OBJ ACT" or, for group names with a space, '+' or ',', the CSV form "allow|deny, SUB, OBJ, ACT, \"group:NAME\"..."`

// parseTestLine reads one line of a test file (see RunTests); msg says
// what is wrong with a malformed one.
func parseTestLine(line string) (want string, pr facade.Principal, obj, act, msg string) {
	var extra []string // group:NAME and role:R, as written
	if strings.ContainsAny(line, `,"`) {
		f, _, problem := compiled.SplitCSV(line)
		if problem != "" {
			return "", pr, "", "", problem + "; " + testLineForms
		}
		if len(f) < 4 {
			return "", pr, "", "", testLineForms
		}
		want, pr.ID, obj, act, extra = f[0], f[1], f[2], f[3], f[4:]
	} else {
		f := strings.Fields(line)
		if len(f) != 4 {
			return "", pr, "", "", testLineForms
		}
		want, obj, act = f[0], f[2], f[3]
		var rest string
		pr.ID, rest, _ = strings.Cut(f[1], "+")
		if rest != "" {
			extra = strings.Split(rest, "+")
		}
	}
	for _, g := range extra {
		if role, ok := strings.CutPrefix(g, authz.PrefixRole); ok && role != "" {
			pr.Roles = append(pr.Roles, role)
			continue
		}
		name, ok := strings.CutPrefix(g, compiled.GroupPrefix)
		if !ok || !facade.ValidGroupName(name) {
			return "", pr, "", "", fmt.Sprintf("%q: each addition to SUB is group:NAME (NAME 1 to %d printable characters) or role:R", g, facade.MaxGroupNameLen)
		}
		pr.Groups = append(pr.Groups, name)
	}
	if len(pr.Roles) > 0 {
		pr.Role = pr.Roles[0]
	}
	if len(pr.Roles) == 1 {
		pr.Roles = nil
	}
	switch {
	case want != "allow" && want != "deny":
		return "", pr, "", "", testLineForms
	case pr.ID == "" || obj == "" || act == "":
		return "", pr, "", "", "SUB, OBJ and ACT must not be empty; " + testLineForms
	}
	return want, pr, obj, act, ""
}
