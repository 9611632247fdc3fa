package server

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/facade-dev/facade/server/problem"
)

// maxHeaderBytes is the service's own limit on a request's header block
// (request line included). The http.Server's limit is set well above it so
// that the service, not net/http, refuses oversize headers, with the same
// problem body and headers as every other error (see limitHeaders).
const (
	maxHeaderBytes    = 16 << 10
	serverHeaderBytes = 64 << 10
)

// limitHeaders answers 431 when the request line and headers exceed
// maxHeaderBytes.
func limitHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if headerSize(c.Request()) > maxHeaderBytes {
			return problem.HeadersTooLarge
		}
		return next(c)
	}
}

// headerSize counts the header block as it was on the wire: the request
// line, and "Name: value\r\n" for every header line.
func headerSize(r *http.Request) int {
	n := len(r.Method) + len(r.RequestURI) + len(r.Proto) + 4
	for k, vs := range r.Header {
		for _, v := range vs {
			n += len(k) + len(v) + 4
		}
	}
	return n + len(r.Host) + len("Host: \r\n")
}

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
	return answeringConn{c}, nil
}

type answeringConn struct{ net.Conn }

// goAnswer matches net/http's own answers, each of which it writes in one
// Write: its error answers, with exactly these headers (responses from
// handlers always carry a Date header and write Connection before
// Content-Type, so never match), and the 417 it sends for an Expect other
// than 100-continue (a status no handler of the service uses).
var goAnswer = regexp.MustCompile(`^HTTP/1\.1 (?:(\d{3}) [^\r\n]*\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n|(417) Expectation Failed\r\n)`)

func (c answeringConn) Write(p []byte) (int, error) {
	if !mayBeGoAnswer(p) {
		return c.Conn.Write(p)
	}
	m := goAnswer.FindSubmatch(p)
	if m == nil {
		return c.Conn.Write(p)
	}
	status, _ := strconv.Atoi(string(m[1]) + string(m[2]))
	if _, err := c.Conn.Write(connProblem(status)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// mayBeGoAnswer is a cheap test before goAnswer: most writes are bodies, or
// a handler's headers, whose first header line is not Content-Type (every
// handler's response carries Cache-Control). The regexp on every write was
// a visible share of a request's CPU in bench/run.sh.
func mayBeGoAnswer(p []byte) bool {
	if !bytes.HasPrefix(p, []byte("HTTP/1.1 ")) {
		return false
	}
	eol := bytes.IndexByte(p, '\n')
	return eol > 0 && (bytes.HasPrefix(p[eol+1:], []byte("Content-Type: text/plain")) || bytes.HasPrefix(p[9:], []byte("417 ")))
}

// goRefusals are net/http's own statuses and what the service says instead.
var goRefusals = map[int]error{
	http.StatusRequestHeaderFieldsTooLarge: problem.HeadersTooLarge,
	http.StatusNotImplemented:              problem.NotImplemented,
	http.StatusHTTPVersionNotSupported:     problem.VersionNotSupported,
	http.StatusExpectationFailed:           problem.ExpectUnsupported,
}

// connProblem is a whole HTTP/1.1 response for one of net/http's refusals,
// written through problem.Render like every other error.
func connProblem(goStatus int) []byte {
	err, ok := goRefusals[goStatus]
	if !ok {
		err = problem.MalformedRequest
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
