package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/facade-dev/facade/authz"
	"github.com/facade-dev/facade/authz/compiled"
	"github.com/facade-dev/facade/authz/policytool"
)

// What each tool of `facade policy` prints and the exit code it sets
// (docs/policy.md): check, explain, test, who, what, diff and report.
// policy.go reads the command line; usage is in policy_usage.go.

func (t *policyTool) check() int {
	for _, f := range []string{*t.model, *t.policy} {
		if _, err := os.Stat(f); err != nil {
			return t.fail(err) // not a problem in the files: there is no file to check
		}
	}
	problems := authz.Check(*t.model, *t.policy)
	for _, p := range problems {
		fmt.Fprintln(t.stdout, p.String())
	}
	if compiled.HasErrors(problems) {
		return 1
	}
	p, code := t.open(*t.policy)
	if p == nil {
		return code
	}
	fmt.Fprintf(t.stdout, "ok: %s and %s (hash %s)\n", *t.model, *t.policy, p.Hash())
	if p.Decider() == "index" {
		fmt.Fprintf(t.stdout, "decider: index (%s)\n", p.Family())
	} else {
		fmt.Fprintf(t.stdout, "decider: casbin (slower: %s)\n", p.Family())
	}
	return 0
}

func (t *policyTool) explain() int {
	if *t.grade != "" {
		if *t.obj != "" {
			return t.fail(fmt.Errorf("give --obj or --grade, not both"))
		}
		*t.obj = "student:" + *t.grade
	}
	if !required(t.sub, t.obj, t.act) {
		return t.fail(fmt.Errorf("--sub, --obj (or --grade) and --act are required"))
	}
	p, code := t.open(*t.policy)
	if p == nil {
		return code
	}
	x, err := p.Explain(t.principal(), *t.obj, *t.act)
	if err != nil {
		return t.fail(err)
	}
	verdict, code := "deny", 1
	if x.Allow {
		verdict, code = "allow", 0
	}
	fmt.Fprintln(t.stdout, verdict)
	for _, l := range x.Lines() {
		fmt.Fprintln(t.stdout, "  "+l)
	}
	return code
}

func (t *policyTool) test() int {
	if len(t.args) != 1 {
		return t.fail(fmt.Errorf("give one test file: facade policy test FILE"))
	}
	data, err := os.ReadFile(t.args[0])
	if err != nil {
		return t.fail(err)
	}
	p, code := t.open(*t.policy)
	if p == nil {
		return code
	}
	res, err := p.RunTests(t.args[0], data)
	if err != nil {
		return t.fail(err)
	}
	for _, m := range res.Mismatches {
		fmt.Fprintln(t.stdout, m)
	}
	fmt.Fprintf(t.stdout, "%d cases, %d mismatches\n", res.Cases, len(res.Mismatches))
	if len(res.Mismatches) > 0 {
		return 1
	}
	return 0
}

func (t *policyTool) who() int {
	if !required(t.obj, t.act) {
		return t.fail(fmt.Errorf("--obj and --act are required"))
	}
	p, code := t.open(*t.policy)
	if p == nil {
		return code
	}
	principals, groups := p.Who(*t.obj, *t.act, t.groups, t.roles)
	for _, n := range principals {
		fmt.Fprintln(t.stdout, "principal "+n)
	}
	for _, n := range groups {
		fmt.Fprintln(t.stdout, "group "+n)
	}
	return 0
}

func (t *policyTool) what() int {
	if !required(t.sub) {
		return t.fail(fmt.Errorf("--sub is required"))
	}
	p, code := t.open(*t.policy)
	if p == nil {
		return code
	}
	for _, l := range p.What(t.principal()) {
		fmt.Fprintln(t.stdout, l)
	}
	return 0
}

func (t *policyTool) diff() int {
	if !required(t.old, t.new) {
		return t.fail(fmt.Errorf("--old and --new are required"))
	}
	old, code := t.open(*t.old)
	if old == nil {
		return code
	}
	new, code := t.open(*t.new)
	if new == nil {
		return code
	}
	if *t.format == "markdown" {
		r, err := policytool.Review(old, new)
		if err != nil {
			return t.fail(err)
		}
		fmt.Fprint(t.stdout, r.Markdown(fmt.Sprintf("Policy change: %s → %s", *t.old, *t.new)))
		if len(r.Gained)+len(r.Lost) > 0 {
			return 1
		}
		return 0
	}
	changes, err := policytool.Diff(old, new, t.roles)
	if err != nil {
		return t.fail(err)
	}
	for _, c := range changes {
		fmt.Fprintln(t.stdout, c)
	}
	if len(changes) > 0 {
		return 1
	}
	fmt.Fprintln(t.stdout, "no decision changes")
	return 0
}

// report writes the access review: CSV (a header, then one row per grant,
// the citing lines joined by " | ") or a JSON array.
func (t *policyTool) report() int {
	p, err := policytool.Open(*t.model, *t.policy)
	if err != nil {
		fmt.Fprintf(t.stderr, "facade policy report: %v\n", err)
		return 1
	}
	if err := t.attachLastUse(p); err != nil {
		fmt.Fprintf(t.stderr, "facade policy report: %v\n", err)
		return 1
	}
	grants, err := p.Report(*t.sub)
	if err != nil {
		fmt.Fprintf(t.stderr, "facade policy report: %v\n", err)
		return 1
	}
	if *t.format == "json" {
		if grants == nil {
			grants = []policytool.Grant{}
		}
		enc := json.NewEncoder(t.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(grants); err != nil {
			return 1
		}
		return 0
	}
	w := csv.NewWriter(t.stdout)
	w.Write([]string{"subject", "kind", "object", "action", "granted_by", "except", "last_used"}) //nolint:errcheck // checked by Flush
	for _, g := range grants {
		w.Write([]string{g.Subject, g.Kind, g.Object, g.Action, strings.Join(g.GrantedBy, " | "), strings.Join(g.Except, " | "), timeOrEmpty(g.LastUsed)}) //nolint:errcheck // checked by Flush
	}
	w.Flush()
	if w.Error() != nil {
		return 1
	}
	return 0
}
