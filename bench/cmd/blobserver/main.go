// Command blobserver answers every request with one file's bytes, held in
// memory, through plain net/http and nothing else: the floor under any Go
// service that answers from memory on this machine. bench/run.sh runs it
// with Facade's filtered project list, beside nginx serving the same file,
// so the table tells what net/http itself costs from what Facade adds.
// It is a tool of bench/run.sh, not part of the product.
//
//	blobserver -file list.json    # prints its base URL, serves until SIGTERM
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/facade-dev/facade/bench/internal/loopback"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "blobserver:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("blobserver", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:0", "listen address (loopback)")
	file := fs.String("file", "", "the file every request is answered with")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *file == "" {
		return errors.New("-file is required")
	}
	body, err := os.ReadFile(*file)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	length := strconv.Itoa(len(body))
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header()["Content-Type"] = []string{"application/json"}
		w.Header()["Content-Length"] = []string{length}
		_, _ = w.Write(body)
	})
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return loopback.Serve(ctx, ln, h, stdout)
}
