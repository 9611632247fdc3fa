package server

import (
	"bytes"
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

// answeringConn is one connection of Listener. net/http writes its own
// answers straight to the connection, before any handler runs, so no
// ResponseWriter or middleware ever sees them: recognising them on their
// way out is the one place they can be changed.
type answeringConn struct{ net.Conn }

func (c *answeringConn) Write(p []byte) (int, error) {
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
