// Command facade runs the Facade service and its operator tools:
//
//	facade serve                      the production server
//	facade demo                       everything in one process, nothing installed
//	facade token --sub ID --role R    mint an HS256 token (FACADE_JWT_SECRET)
//	facade seed --file F              load accounts and grades into Redis
//	facade policy check|explain|test|who|what|diff|report   the casbin policy tools
//	facade version                    the module version and commit
//
// Settings come from FACADE_* environment variables (see README.md). Exit
// codes follow the usual convention: 0 done, 1 failed (or, for the policy
// tools, "deny"/"mismatch"), 2 the command line or the settings are wrong.
package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

func main() {
	os.Exit(run(os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr))
}

// commands is every command, in the order `facade --help` lists them (the
// demo build adds its own, demoCommands).
var commands = append([]command{
	{name: "serve", synopsis: "run the service (needs FACADE_REDIS_URL, FACADE_JWT_SECRET or FACADE_JWKS_URL)",
		run: func(ctx context.Context, c *cmdEnv) error { return cmdServe(ctx, c.args, c.getenv, c.stdout, c.stderr) }},
	{name: "demo", synopsis: demoSynopsis,
		run: func(ctx context.Context, c *cmdEnv) error { return cmdDemo(ctx, c.args, c.getenv, c.stdout, c.stderr) }},
	{name: "token", synopsis: "print a token signed with FACADE_JWT_SECRET: --sub ID --role ROLE [--ttl 1h]",
		run: func(_ context.Context, c *cmdEnv) error { return cmdToken(c.args, c.getenv, c.stdout) }},
	{name: "seed", synopsis: "load accounts and grades from a JSON file into Redis: --file F|- [--dry-run]",
		run: func(ctx context.Context, c *cmdEnv) error { return cmdSeed(ctx, c) }},
	{name: "policy", synopsis: "casbin policy tools: " + strings.Join(policyTools, ", "),
		run: func(_ context.Context, c *cmdEnv) error { return cmdPolicy(c.args, c.getenv, c.stdout, c.stderr) }},
	{name: "sessions", synopsis: "list or end a principal's browser sessions: list|revoke --sub ID",
		run: cmdSessions},
	{name: "version", synopsis: "print the module version and commit (also --version)",
		run: func(_ context.Context, c *cmdEnv) error { return cmdVersion(c) }},
}, demoCommands...)

// run dispatches a command and returns the process exit code. Everything
// it reads from outside comes in: the arguments, the settings source
// (os.Getenv in production, a map in tests) and the standard streams.
func run(args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		printUsage(stderr)
		return exitUsage
	}
	name := args[0]
	switch name {
	case "help", "-h", "-help", "--help":
		if name != "help" || len(args) == 1 || args[1] == "help" || strings.HasPrefix(args[1], "-") {
			printUsage(stdout)
			return exitOK
		}
		// "facade help seed" is "facade seed --help", as in go and git.
		name, args = args[1], append(args[1:], "--help")
	case "--version", "-version":
		name = "version"
	}
	cmd, ok := findCommand(name)
	if !ok {
		return usageFailure(stderr, "facade", errorf("unknown command %q", args[0]), printUsage)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	env := &cmdEnv{args: args[1:], getenv: getenv, stdin: stdin, stdout: stdout, stderr: stderr}
	return exitCode(stderr, "facade "+cmd.name, cmd.run(ctx, env))
}

func findCommand(name string) (command, bool) {
	for _, c := range commands {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}
