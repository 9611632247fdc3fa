// Package loopback serves the benchmark's helper servers (bench/cmd) the
// way bench/run.sh expects: the base URL printed on one line of stdout once
// the listener is open, served until the context ends (SIGINT or SIGTERM),
// then shut down gracefully.
package loopback

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// BaseURL is the http URL of ln.
func BaseURL(ln net.Listener) string { return "http://" + ln.Addr().String() }

// Serve serves h on ln, prints ln's base URL to stdout, and returns when
// ctx ends (after a graceful shutdown of up to 5 s) or the server fails.
func Serve(ctx context.Context, ln net.Listener, h http.Handler, stdout io.Writer) error {
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	fmt.Fprintln(stdout, BaseURL(ln))
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return hs.Shutdown(sctx)
}
