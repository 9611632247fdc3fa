// Command facade runs the Facade service and its operator tools:
//
//	facade serve                      the production server
//	facade demo                       everything in one process, nothing installed
//	facade token --sub ID --role R    mint an HS256 token (FACADE_JWT_SECRET)
//	facade seed --file F              load accounts and grades into Redis
//	facade policy check|explain|test|who|what|diff   the casbin policy tools
//
// Settings come from FACADE_* environment variables (see README.md).
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	os.Exit(run(os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

const usage = `usage: facade <command> [flags]

commands:
  serve                                   run the service (needs FACADE_REDIS_URL, FACADE_JWT_SECRET or FACADE_JWKS_URL)
  demo                                    run everything in one process with demo data
  token --sub ID --role ROLE [--ttl 1h]   print a token signed with FACADE_JWT_SECRET
  seed --file F                           load accounts and grades from a JSON file into Redis
  policy check [--model F] [--policy F]   validate the casbin model and policy
  policy explain|test|who|what|diff     explain a decision, test expectations, list who/what, diff two policies (facade policy for usage)
`

// run dispatches a command and returns the process exit code. Everything
// it reads from outside comes in: the arguments, the settings source
// (os.Getenv in production, a map in tests) and the output streams.
func run(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	var err error
	switch args[0] {
	case "serve":
		err = cmdServe(ctx, args[1:], getenv, stderr)
	case "demo":
		err = cmdDemo(ctx, args[1:], getenv, stdout, stderr)
	case "token":
		err = cmdToken(args[1:], getenv, stdout, stderr)
	case "seed":
		err = cmdSeed(ctx, args[1:], getenv, stdout, stderr)
	case "policy":
		return cmdPolicy(args[1:], getenv, stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "facade: unknown command %q\n%s", args[0], usage)
		return 2
	}
	if err != nil {
		fmt.Fprintf(stderr, "facade %s: %v\n", args[0], err)
		return 1
	}
	return 0
}
