package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	facade "github.com/facade-dev/facade"
	"github.com/facade-dev/facade/authz/policytool"
)

// policyTools are the tools of `facade policy`, as `facade --help` lists
// them; each has its entry in policyUsage and its case in cmdPolicy.
var policyTools = []string{"check", "explain", "test", "who", "what", "diff", "report", "usage"}

// policyUsage lists the policy tools; docs/policy.md shows them at work.
const policyUsage = `usage: facade policy <command> [--model F] [--policy F] [flags]

  check                                 validate model and policy (exit 1 on a problem); says which decider runs
  explain --sub ID [--role R[,R]...] [--group G]... [--groups-incomplete] --obj OBJ --act ACT
  explain --sub ID [--role R[,R]...] [--group G]... [--groups-incomplete] --grade STUDENT --act view|update
                                        what the service answers: exit 0 allow, 1 deny, 2 error;
                                        prints the deciding line and the g chain (roles included);
                                        --groups-incomplete: the token's groups did not fit (overage)
  test FILE                             expected decisions "allow|deny SUB[+group:G...][+role:R...] OBJ ACT" (or the
                                        CSV form "allow, SUB, OBJ, ACT, group:G..."); exit 1 on any mismatch
  who --obj OBJ --act ACT [--role R[,R]...] [--group G]...
                                        every principal and group that may
  what --sub SUB [--role R[,R]...] [--group G]...
                                        every object and action SUB may, through groups
  diff --old F --new F [--role R[,R]...] [--format text|markdown]
                                        decisions that change between two policy files; exit 1 when any does;
                                        markdown: the access gained and lost with the lines that cause it (a PR comment)
  report [--format csv|json] [--subject S]
                                        access review: every subject x object x action granted, with the lines
                                        that grant it (and their last use, with FACADE_REDIS_URL); exit 1 when the
                                        files do not load
  usage [--since 90d] [--format text|csv|json] [--unused]
                                        every line's uses and last use in the window (from Redis), unused first;
                                        --unused lists only those and exits 1 when there are any
`

// cmdPolicy runs the policy tools. "deny", "mismatch" and "problems found"
// are answers, not crashes: a tool prints its answer and sets the exit code
// (exitStatus).
func cmdPolicy(args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	printPolicyUsage := func(w io.Writer) { fmt.Fprint(w, policyUsage) }
	if len(args) == 0 {
		return usageError{errors.New("which tool?"), printPolicyUsage}
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		printPolicyUsage(stdout)
		return errHelp
	}
	t := &policyTool{stdout: stdout, stderr: stderr, name: args[0]}
	fs := newFlags("policy "+args[0], "facade policy "+args[0]+" [--model F] [--policy F]")
	maxArgs := 0
	var run func() int
	var formats []string // --format's values, the default first
	switch args[0] {
	case "check":
		run = t.check
	case "explain":
		fs.synopsis = "facade policy explain --sub ID [--role R[,R]...] [--group G]... [--groups-incomplete] (--obj OBJ | --grade STUDENT) --act ACT   (exit 0 allow, 1 deny, 2 error)"
		t.sub = fs.String("sub", "", "principal id (a token's sub)")
		fs.Var(&t.roles, "role", "the token's role(s), a comma list or repeated (the policy may give more: g, SUB, role:R)")
		t.groupsIncomplete = fs.Bool("groups-incomplete", false, "the token had more groups than fit (Entra's overage): it carries none, and group grants cannot be checked")
		t.obj = fs.String("obj", "", "object, e.g. account:1001, plan:WEB-NIGHTLY or student:alice")
		t.grade = fs.String("grade", "", "the grade question about `STUDENT` (as --obj student:STUDENT), with the role rules")
		t.act = fs.String("act", "", "action, e.g. view_account; view or update for a grade; view, update or post for a class")
		fs.Var(&t.groups, "group", "a group the principal's token carries (repeatable): member of group:`NAME`")
		run = t.explain
	case "test":
		fs.synopsis = "facade policy test FILE   (lines \"allow|deny SUB[+group:G...][+role:R...] OBJ ACT\", # comments; exit 1 on a mismatch)"
		maxArgs = 1
		run = t.test
	case "who":
		fs.synopsis = "facade policy who --obj OBJ --act ACT [--role R[,R]...] [--group G]..."
		t.obj = fs.String("obj", "", "object")
		t.act = fs.String("act", "", "action")
		fs.Var(&t.roles, "role", "ask each principal as carrying these role(s) in its token (a grade needs professor or student)")
		fs.Var(&t.groups, "group", "ask each principal as carrying group `NAME` in its token (repeatable)")
		run = t.who
	case "what":
		fs.synopsis = "facade policy what --sub SUB [--role R[,R]...] [--group G]..."
		t.sub = fs.String("sub", "", "principal or group")
		fs.Var(&t.roles, "role", "the token's role(s) (the policy may give more: g, SUB, role:R)")
		fs.Var(&t.groups, "group", "a group the principal's token carries (repeatable): member of group:`NAME`")
		run = t.what
	case "diff":
		fs.synopsis = "facade policy diff --old F --new F [--role R[,R]...] [--format text|markdown]   (exit 1 when a decision changes)"
		t.old = fs.String("old", "", "policy file before the change")
		t.new = fs.String("new", "", "policy file after the change")
		fs.Var(&t.roles, "role", "ask each principal as carrying these role(s) in its token (a grade needs professor or student)")
		t.format, formats = fs.String("format", "text", "output `format`: text (a line per decision) or markdown (a pull-request comment)"), []string{"text", "markdown"}
		run = t.diff
	case "report":
		fs.synopsis = "facade policy report [--format csv|json] [--subject S]   (exit 0 ok, 1 failed, 2 usage)"
		t.format, formats = fs.String("format", "csv", "output `format`: csv or json"), []string{"csv", "json"}
		t.sub = fs.String("subject", "", "only this principal or group")
		run = t.report
	case "usage":
		fs.synopsis = "facade policy usage [--since 90d] [--format text|csv|json] [--unused]   (exit 1 with --unused when a line is unused, 2 error)"
		t.since = fs.String("since", "90d", "the `window`: days (90d) or a Go duration (36h), at most 400d")
		t.format, formats = fs.String("format", "text", "output `format`: text, csv or json"), []string{"text", "csv", "json"}
		t.unused = fs.Bool("unused", false, "list only the lines unused in the window; exit 1 when there are any")
		run = t.usage
	default:
		return usageError{fmt.Errorf("unknown tool %q", args[0]), printPolicyUsage}
	}
	// Help and a wrong command line come before the settings: --help
	// works even where a FACADE_* value is malformed.
	s, settingsErr := loadSettings(getenv)
	t.model = fs.String("model", s.Model, "casbin model `file` (FACADE_MODEL)")
	t.policy = fs.String("policy", s.Policy, "casbin policy `file` (FACADE_POLICY)")
	tool := "facade policy " + args[0]
	if err := fs.parse(args[1:], stdout, maxArgs); err != nil {
		return toolError{tool, err}
	}
	if settingsErr != nil {
		return toolError{tool, settingsErr}
	}
	if t.format != nil && !slices.Contains(formats, *t.format) {
		return toolError{tool, usageError{fmt.Errorf("--format %q: %s", *t.format, strings.Join(formats, " or ")), fs.usage}}
	}
	t.args, t.settings = fs.Args(), s
	return exitStatus(run())
}

type policyTool struct {
	stdout, stderr               io.Writer
	name                         string
	args                         []string
	model, policy, sub, obj, act *string
	grade                        *string
	old, new, format, since      *string
	unused                       *bool
	roles                        roleFlag
	groups                       groupFlag
	groupsIncomplete             *bool
	settings                     settings
}

// roleFlag collects --role: one role, a comma list, or the flag repeated,
// as a token's list role claim carries several (a student who is also a
// professor).
type roleFlag []string

func (r *roleFlag) String() string { return strings.Join(*r, ",") }

func (r *roleFlag) Set(v string) error {
	for _, role := range strings.Split(v, ",") {
		if role = strings.TrimSpace(role); role != "" && !slices.Contains(*r, role) {
			*r = append(*r, role)
		}
	}
	return nil
}

// groupFlag collects --group: names as a token carries them, any a
// provider sends ("devs", "acme:payments", "Domain Users"; the policy's
// spelling "group:devs" is accepted too, so a name that itself starts
// with "group:" is written with the prefix twice), each valid.
type groupFlag []string

func (g *groupFlag) String() string { return strings.Join(*g, ",") }

func (g *groupFlag) Set(v string) error {
	name := strings.TrimPrefix(v, "group:")
	if !facade.ValidGroupName(name) {
		return fmt.Errorf("group %q: a group name is 1 to %d printable characters (no control characters)", v, facade.MaxGroupNameLen)
	}
	*g = append(*g, name)
	return nil
}

// principal is the principal --sub, --role and --group describe.
func (t *policyTool) principal() facade.Principal {
	p := facade.Principal{ID: *t.sub, Groups: t.groups}
	if len(t.roles) > 0 {
		p.Role = t.roles[0]
	}
	if len(t.roles) > 1 {
		p.Roles = t.roles
	}
	if t.groupsIncomplete != nil && *t.groupsIncomplete {
		// As the service signs such a person in: without groups.
		p.Groups, p.GroupsIncomplete = nil, true
	}
	return p
}

func (t *policyTool) fail(err error) int {
	fmt.Fprintf(t.stderr, "facade policy %s: %v\n", t.name, err)
	return 2
}

func (t *policyTool) open(policyPath string) (*policytool.Policy, int) {
	p, err := policytool.Open(*t.model, policyPath)
	if err != nil {
		return nil, t.fail(err)
	}
	return p, 0
}

func required(values ...*string) bool {
	for _, v := range values {
		if v == nil || *v == "" {
			return false
		}
	}
	return true
}
