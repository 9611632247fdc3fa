package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/facade-dev/facade/authz"
)

// cmdPolicy runs `policy check` and `policy explain`; it returns the exit
// code itself because "deny" and "problems found" are answers, not crashes.
func cmdPolicy(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, "usage: facade policy check|explain [flags]\n")
		return 2
	}
	s, err := loadSettings(getenv)
	if err != nil {
		fmt.Fprintf(stderr, "facade policy: %v\n", err)
		return 2
	}
	fs := flag.NewFlagSet("policy "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	model := fs.String("model", s.Model, "casbin model file")
	policy := fs.String("policy", s.Policy, "casbin policy file")
	switch args[0] {
	case "check":
		if fs.Parse(args[1:]) != nil {
			return 2
		}
		problems := authz.Check(*model, *policy)
		for _, p := range problems {
			fmt.Fprintln(stdout, p.String())
		}
		if authz.HasErrors(problems) {
			return 1
		}
		fmt.Fprintf(stdout, "ok: %s and %s\n", *model, *policy)
		return 0
	case "explain":
		sub := fs.String("sub", "", "principal id")
		role := fs.String("role", "", "role")
		obj := fs.String("obj", "", "object, e.g. account:1001 or student:alice")
		act := fs.String("act", "", "action, e.g. view_account")
		if fs.Parse(args[1:]) != nil {
			return 2
		}
		allow, lines, err := authz.Explain(*model, *policy, *sub, *role, *obj, *act)
		if err != nil {
			fmt.Fprintf(stderr, "facade policy explain: %v\n", err)
			return 2
		}
		verdict := "deny"
		if allow {
			verdict = "allow"
		}
		fmt.Fprintln(stdout, verdict)
		for _, l := range lines {
			fmt.Fprintln(stdout, "  "+l)
		}
		return 0
	}
	fmt.Fprintf(stderr, "facade policy: unknown subcommand %q\n", args[0])
	return 2
}
