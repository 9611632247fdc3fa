// Command bambooserver serves the Bamboo-compatible test server
// (upstream/bambootest) on a loopback port, filled with the demo's
// projects and, optionally, generated ones, so that load benchmarks have
// a realistic upstream document. It is a tool of bench/run.sh, not
// part of the product.
//
//	BAMBOO_TOKEN=secret bambooserver -addr 127.0.0.1:8085 -projects 300 -plans 4 -artifact-size 1073741824
//
// The generated projects are B001, B002, ... with plans BUILD, TEST,
// DEPLOY, NIGHTLY, ... (as many as -plans asks). With -artifact-size, the
// result B001-BUILD-1 carries a shared artifact "bench.img" of that many
// bytes, generated while it is downloaded (never held in memory), served at
// /browse/B001-BUILD-1/artifact/shared/bench.img/bench.img. It stops on
// SIGINT or SIGTERM.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/facade-dev/facade/bench/internal/loopback"
	"github.com/facade-dev/facade/upstream/bambootest"
)

// planNames are the short keys of generated plans, used in this order.
var planNames = []string{"BUILD", "TEST", "DEPLOY", "NIGHTLY", "RELEASE", "LINT", "DOCS", "BENCH"}

// options are the command line.
type options struct {
	addr     string
	projects int
	plans    int
	token    string
	artifact int64
}

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "bambooserver:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	opts, err := parseOptions(args, stderr)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serve(ctx, opts, stdout)
}

func parseOptions(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("bambooserver", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.StringVar(&o.addr, "addr", "127.0.0.1:0", "listen address (loopback)")
	fs.IntVar(&o.projects, "projects", 0, "generated projects added to the demo's four")
	fs.IntVar(&o.plans, "plans", 4, fmt.Sprintf("plans per generated project (1-%d)", len(planNames)))
	fs.Int64Var(&o.artifact, "artifact-size", 0, "bytes of the artifact bench.img of B001-BUILD-1 (0: none)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	// The token comes from the environment so it does not show in ps.
	o.token = os.Getenv("BAMBOO_TOKEN")
	switch {
	case o.token == "":
		return o, errors.New("BAMBOO_TOKEN must be set")
	case o.projects < 0 || o.projects > 9999:
		return o, errors.New("-projects must be 0-9999")
	case o.plans < 1 || o.plans > len(planNames):
		return o, fmt.Errorf("-plans must be 1-%d", len(planNames))
	case o.artifact < 0 || (o.artifact > 0 && o.projects < 1):
		return o, errors.New("-artifact-size must be >= 0 and needs -projects >= 1")
	}
	return o, nil
}

// serve listens, prints the base URL on one line, and serves until ctx ends.
func serve(ctx context.Context, o options, stdout io.Writer) error {
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return err
	}
	base := loopback.BaseURL(ln)
	bt := bambootest.New(bambootest.WithToken(o.token), bambootest.WithBaseURL(base))
	bambootest.DemoData(bt)
	addGenerated(bt, o.projects, o.plans)
	if o.artifact > 0 {
		bt.AddResult("B001-BUILD", 1, "Successful",
			bambootest.Artifact{Name: "bench.img", ProducerJobKey: "JOB1", Shared: true, Size: o.artifact})
	}

	return loopback.Serve(ctx, ln, bt, stdout)
}

// addGenerated adds n projects of plans plans each.
func addGenerated(bt *bambootest.Server, n, plans int) {
	for i := 1; i <= n; i++ {
		key := fmt.Sprintf("B%03d", i)
		bt.AddProject(key, "Bench "+key, "Benchmark project "+key+".")
		for _, plan := range planNames[:plans] {
			bt.AddPlan(key, plan, plan+" of "+key)
		}
	}
}
