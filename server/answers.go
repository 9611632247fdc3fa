package server

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strconv"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/server/problem"
)

// Listener wraps ln so the few answers net/http writes on its own, before
// any handler runs (400 for a malformed request line, Host or escape, 431
// past the server's header limit, 417 for an Expect it does not know, 501
// and 505), leave as problem bodies with the headers every response
// carries, like every other error.
func Listener(ln net.Listener) net.Listener { return answeringListener{ln} }

type answeringListener struct{ net.Listener }

func (l answeringListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &answeringConn{Conn: c}, nil
}

// answeringConn is one connection of Listener. Besides rewriting
// net/http's own answers, it can gather: while a handler writes a whole
// answer of known length (conditional.go), net/http hands the connection
// the status line, the headers and the first part of the body (its 4 KiB
// buffer, full) and then the rest of the body, in two writes; held and
// sent as one writev, the answer costs one system call and one trip
// through the loopback or network stack instead of two. It is kept, though
// net/http could write the answer alone, because it wins more than 10 %
// end to end (docs/performance.md, "A whole answer in one writev"). Only
// the serving goroutine writes to the connection, so the fields need no
// lock.
type answeringConn struct {
	net.Conn
	gathering bool
	held      net.Buffers // what was written while gathering, in order
	sending   net.Buffers // held, as WriteTo consumes it
	copies    []byte      // the backing of the held pieces that were copied
	err       error       // a gathered send failed: the connection is closed
}

// gatherCopyMax: a piece up to this size is copied when held (net/http's
// buffers, which it reuses once Write returns, are 4 KiB); a larger one
// can only be the handler's own body, passed through unbuffered, which
// stays unchanged until the handler's Write returns, after release.
const gatherCopyMax = 8 << 10

type connKey struct{}

// connContext is http.Server's ConnContext: it lets a handler reach its
// connection (gatherer).
func connContext(ctx context.Context, c net.Conn) context.Context {
	if ac, ok := c.(*answeringConn); ok {
		return context.WithValue(ctx, connKey{}, ac)
	}
	return ctx
}

// gatherer is the connection r arrived on, or nil when it did not come
// through Listener (then gather and release do nothing).
func gatherer(r *http.Request) *answeringConn {
	c, _ := r.Context().Value(connKey{}).(*answeringConn)
	return c
}

// gather holds the connection's writes until release.
func (c *answeringConn) gather() {
	if c != nil {
		c.gathering = true
	}
}

// release sends what was held since gather, in one system call. On a
// failure the connection is closed: net/http was told the bytes were
// written, so it must not go on to read another request on it.
func (c *answeringConn) release() error {
	if c == nil || !c.gathering {
		return nil
	}
	c.gathering = false
	var err error
	switch len(c.held) {
	case 0:
	case 1:
		_, err = c.Conn.Write(c.held[0])
	default:
		c.sending = c.held
		_, err = c.sending.WriteTo(c.Conn)
		c.sending = nil
	}
	clear(c.held)
	c.held, c.copies = c.held[:0], c.copies[:0]
	if err != nil {
		c.err = err
		_ = c.Conn.Close()
	}
	return err
}

func (c *answeringConn) hold(p []byte) {
	if len(p) > gatherCopyMax {
		c.held = append(c.held, p)
		return
	}
	start := len(c.copies)
	if cap(c.copies)-start < len(p) {
		// A new backing: the pieces held so far keep the old one.
		c.copies = make([]byte, 0, max(2*cap(c.copies), len(p), 4<<10))
		start = 0
	}
	c.copies = append(c.copies, p...)
	c.held = append(c.held, c.copies[start:start+len(p):start+len(p)])
}

func (c *answeringConn) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	if c.gathering {
		c.hold(p)
		return len(p), nil
	}
	status := goAnswerStatus(p)
	if status == 0 {
		return c.Conn.Write(p)
	}
	if _, err := c.Conn.Write(connProblem(status)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// goErrorHeaders are the headers of net/http's own error answers, exactly
// (its errorHeaders). A handler's response never starts with them: it
// always carries Cache-Control and a Date before Content-Type.
const goErrorHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

// goAnswerStatus is the status of p when p is one of net/http's own
// answers, each of which it writes in one Write: an error answer with
// exactly goErrorHeaders, or the 417 it sends for an Expect other than
// 100-continue (a status no handler of the service uses). Any other write
// is 0. Most writes are bodies, which the first test turns away.
func goAnswerStatus(p []byte) int {
	rest, ok := bytes.CutPrefix(p, []byte("HTTP/1.1 "))
	if !ok || len(rest) < 4 || rest[3] != ' ' {
		return 0
	}
	eol := bytes.IndexByte(rest, '\r')
	isError := eol > 0 && bytes.HasPrefix(rest[eol:], []byte(goErrorHeaders))
	if !isError && !bytes.HasPrefix(rest, []byte("417 Expectation Failed\r\n")) {
		return 0
	}
	status, err := strconv.Atoi(string(rest[:3]))
	if err != nil {
		return 0
	}
	return status
}

// goRefusals are net/http's own statuses and what the service says instead.
var goRefusals = map[int]error{
	http.StatusRequestHeaderFieldsTooLarge: facade.ErrHeadersTooLarge,
	http.StatusNotImplemented:              facade.ErrNotImplemented,
	http.StatusHTTPVersionNotSupported:     facade.ErrVersionNotSupported,
	http.StatusExpectationFailed:           facade.ErrExpectUnsupported,
}

// connProblem is a whole HTTP/1.1 response for one of net/http's refusals,
// written through problem.Render like every other error.
func connProblem(goStatus int) []byte {
	err, ok := goRefusals[goStatus]
	if !ok {
		err = facade.ErrMalformedRequest
	}
	h := http.Header{}
	setBaseHeaders(h, newRequestID())
	status, body := problem.Render(h, err, h.Get("X-Request-ID"))
	res := &http.Response{
		StatusCode: status, ProtoMajor: 1, ProtoMinor: 1, Header: h, Close: true,
		ContentLength: int64(len(body)), Body: io.NopCloser(bytes.NewReader(body)),
	}
	var b bytes.Buffer
	_ = res.Write(&b)
	return b.Bytes()
}
