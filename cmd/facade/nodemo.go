//go:build !demo

package main

import (
	"context"
	"errors"
	"io"
)

// demoCommand is the one line the production build gives in place of the
// demo: the binary that guards grades and money carries no embedded store,
// demo identity provider or fake upstream (README "Running it for real").
const demoCommand = "go run -tags demo ./cmd/facade demo"

var errNoDemo = errors.New("the demo is not in this build; start it with: " + demoCommand)

// cmdDemo in the production build only says how to start the demo.
func cmdDemo(_ context.Context, args []string, _ func(string) string, stdout, _ io.Writer) error {
	fs := newFlags("demo", "facade demo   (not in this build: "+demoCommand+")")
	if err := fs.parse(args, stdout, 0); err != nil {
		return err
	}
	return errNoDemo
}

const demoSynopsis = "not in this build: " + demoCommand

// demoCommands are none in the production build.
var demoCommands []command
