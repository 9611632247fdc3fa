package server

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"testing"
)

// A gathered answer reaches the client whole and in order, even though
// net/http reuses its 4 KiB buffer as soon as a Write returns: the small
// pieces are copied when held, the handler's own body is sent as it is.
func TestGatheredAnswerArrivesWholeAndInOrder(t *testing.T) {
	server, client := net.Pipe()
	t.Cleanup(func() { _ = client.Close() })
	c := &answeringConn{Conn: server}
	got := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(client)
		got <- b
	}()

	head := bytes.Repeat([]byte("h"), 4096) // net/http's buffer: headers and the body's start
	body := bytes.Repeat([]byte("b"), 3*gatherCopyMax)
	tail := []byte("tail")
	var want []byte
	c.gather()
	for _, p := range [][]byte{head, body, tail} {
		want = append(want, p...)
		if n, err := c.Write(p); n != len(p) || err != nil {
			t.Fatalf("held write: %d, %v", n, err)
		}
	}
	head[0], tail[0] = 'X', 'X' // net/http reuses its buffer before release
	if err := c.release(); err != nil {
		t.Fatal(err)
	}
	// After release, writes go straight through again.
	if _, err := c.Write([]byte("next")); err != nil {
		t.Fatal(err)
	}
	want = append(want, "next"...)
	_ = server.Close()
	if b := <-got; !bytes.Equal(b, want) {
		t.Fatalf("client received %d bytes, not the %d written in order (first byte %q)", len(b), len(want), b[:1])
	}
}

// When the gathered send fails, net/http has already been told the bytes
// were written: the connection must be closed so that no further request
// is read or answered on it.
func TestFailedGatheredSendClosesTheConnection(t *testing.T) {
	server, client := net.Pipe()
	c := &answeringConn{Conn: server}
	_ = client.Close() // the client went away mid-answer
	c.gather()
	_, _ = c.Write(bytes.Repeat([]byte("h"), 4096))
	_, _ = c.Write(bytes.Repeat([]byte("b"), 3*gatherCopyMax))
	if err := c.release(); err == nil {
		t.Fatal("release reported success for a send to a closed peer")
	}
	if _, err := c.Write([]byte("HTTP/1.1 200 OK\r\n")); err == nil {
		t.Fatal("a write after the failed send succeeded; the connection should refuse every write")
	}
	if _, err := server.Read(make([]byte, 1)); err != io.ErrClosedPipe {
		t.Fatalf("connection still open after the failed send (read: %v)", err)
	}
}

// The service's own server hands each request its connection, so that a
// whole answer can be gathered: without that (HTTPServer's ConnContext)
// nothing is, and the project list runs at 0.88 of itself
// (docs/performance.md, "A whole answer in one writev").
func TestServedRequestsCanGatherTheirAnswers(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	reached := make(chan bool, 1)
	srv := HTTPServer("", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached <- gatherer(r) != nil
	}))
	go func() { _ = srv.Serve(Listener(ln)) }()
	t.Cleanup(func() { _ = srv.Close() })
	res, err := http.Get("http://" + ln.Addr().String() + "/")
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	if !<-reached {
		t.Fatal("a request served by HTTPServer over Listener cannot reach its connection: answers leave in two writes")
	}
}
