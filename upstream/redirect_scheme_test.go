package upstream_test

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	facade "github.com/facade-dev/facade"
	"github.com/facade-dev/facade/upstream"
	"github.com/facade-dev/facade/upstream/bambootest"
)

// TestRedirectSchemeOnTheSameServer: Bamboo on one host and port that
// speaks both plain http and TLS (as a proxy in front of it may). A
// redirect from http up to https on the same server is followed (the
// usual "always use https" rule); one from https down to plain http is
// refused before a byte goes out, since the service's token would cross
// the wire in clear text.
func TestRedirectSchemeOnTheSameServer(t *testing.T) {
	bamboo := bambootest.New(bambootest.WithToken(serviceToken))
	bambootest.DemoData(bamboo)
	srv := startDualServer(t, bamboo)

	up, err := upstream.New(upstream.Config{BaseURL: srv.plainURL + "/to-https", Token: serviceToken, HTTPClient: srv.client, Retries: -1, Log: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := up.Projects(context.Background(), upstream.ProjectQuery{}); err != nil {
		t.Fatalf("http to https on the same server: %v", err)
	}

	plainBefore := srv.plain.Load()
	down, err := upstream.New(upstream.Config{BaseURL: srv.tlsURL + "/to-http", Token: serviceToken, HTTPClient: srv.client, Retries: -1, Log: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = down.Projects(context.Background(), upstream.ProjectQuery{})
	wantError(t, err, facade.ErrUpstreamBad)
	if n := srv.plain.Load() - plainBefore; n != 0 {
		t.Fatalf("an https-to-http redirect sent %d request(s) in clear text", n)
	}
}

// dualServer serves bamboo under /bamboo on one port, plain and TLS alike
// (a connection's first byte tells: 0x16 opens a TLS handshake), and
// counts the requests that came in plain.
type dualServer struct {
	plainURL, tlsURL string
	client           *http.Client
	plain            atomic.Int64
}

func startDualServer(t *testing.T, bamboo http.Handler) *dualServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	d := &dualServer{plainURL: "http://" + addr, tlsURL: "https://" + addr}
	mux := http.NewServeMux()
	mux.Handle("/bamboo/", http.StripPrefix("/bamboo", bamboo))
	mux.Handle("/to-https/", http.RedirectHandler(d.tlsURL+"/bamboo/rest/api/latest/project.json", http.StatusFound))
	mux.Handle("/to-http/", http.RedirectHandler(d.plainURL+"/bamboo/rest/api/latest/project.json", http.StatusFound))

	plainLn, tlsLn := newConnQueue(ln.Addr()), newConnQueue(ln.Addr())
	plainSrv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.plain.Add(1)
		mux.ServeHTTP(w, r)
	})}
	go plainSrv.Serve(plainLn) //nolint:errcheck // ends with Close
	tlsSrv := httptest.NewUnstartedServer(mux)
	tlsSrv.Listener = tlsLn
	tlsSrv.StartTLS()
	d.client = tlsSrv.Client()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				br := bufio.NewReader(c)
				first, err := br.Peek(1)
				if err != nil {
					c.Close()
					return
				}
				if first[0] == 0x16 {
					tlsLn.push(peekedConn{c, br})
				} else {
					plainLn.push(peekedConn{c, br})
				}
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		plainSrv.Close()
		tlsSrv.Close()
	})
	return d
}

// peekedConn is a connection whose first bytes were read into r.
type peekedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c peekedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// connQueue is a net.Listener fed the connections the sniffer hands it.
type connQueue struct {
	addr  net.Addr
	conns chan net.Conn
	once  sync.Once
	done  chan struct{}
}

func newConnQueue(addr net.Addr) *connQueue {
	return &connQueue{addr: addr, conns: make(chan net.Conn), done: make(chan struct{})}
}

func (q *connQueue) push(c net.Conn) {
	select {
	case q.conns <- c:
	case <-q.done:
		c.Close()
	}
}

func (q *connQueue) Accept() (net.Conn, error) {
	select {
	case c := <-q.conns:
		return c, nil
	case <-q.done:
		return nil, net.ErrClosed
	}
}

func (q *connQueue) Close() error   { q.once.Do(func() { close(q.done) }); return nil }
func (q *connQueue) Addr() net.Addr { return q.addr }
