package server_test

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// TestCallerChosenMethodsDoNotGrowMetrics: the method label is bounded.
func TestCallerChosenMethodsDoNotGrowMetrics(t *testing.T) {
	e := newEnv(t)
	for i := 0; i < 5; i++ {
		e.do(req{method: fmt.Sprintf("XMETHOD%d", i), path: "/rs/account/1001"})
	}
	if m := e.do(req{method: "GET", path: "/metrics"}); strings.Contains(m.body, "XMETHOD") || !strings.Contains(m.body, `method="OTHER"`) {
		t.Fatal("caller-chosen methods appear as metric labels")
	}
}

// TestHostHeaderDoesNotWhitelistAnOrigin: a refused origin stays refused
// when the request also claims that origin's host (DNS rebinding).
func TestHostHeaderDoesNotWhitelistAnOrigin(t *testing.T) {
	e := newEnv(t)
	seedGrades(t, e)
	hr, _ := http.NewRequest("PUT", e.url+"/student/alice/english/grade", strings.NewReader(`{"grade":"F"}`))
	hr.Host = "evil.example"
	hr.Header.Set("Origin", "http://evil.example")
	hr.Header.Set("Authorization", "Bearer "+token(t, "bob", "professor"))
	hr.Header.Set("X-XSRF-TOKEN", "x")
	hr.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 403 {
		t.Fatalf("write from refused origin with matching Host: %d", res.StatusCode)
	}
}

func TestHeadOnReadRoutes(t *testing.T) {
	e := newEnv(t)
	seedGrades(t, e)
	alice := token(t, "alice", "student")
	r := e.do(req{method: "HEAD", path: "/student/alice/english/grade", token: alice})
	if r.status != 200 || r.body != "" || r.header.Get("ETag") != `"1"` {
		t.Fatalf("HEAD grade: %d %q %v", r.status, r.body, r.header)
	}
	if r := e.do(req{method: "DELETE", path: "/student/alice/english/grade", token: alice, header: map[string]string{"X-XSRF-TOKEN": "x"}}); !strings.Contains(r.header.Get("Allow"), "HEAD") {
		t.Fatalf("Allow without HEAD: %q", r.header.Get("Allow"))
	}
}

// TestEncodedIdentifiers: what encodeURIComponent writes for an allowed
// character works; an encoded '/', '.', '?', '#' or '%' never does.
func TestEncodedIdentifiers(t *testing.T) {
	e := newEnv(t)
	seedGrades(t, e)
	alice := token(t, "alice", "student")
	if r := e.do(req{method: "GET", path: "/student/%61lice/english/grade", token: alice}); r.status != 200 {
		t.Errorf("%%61lice: %d", r.status)
	}
	for _, id := range []string{"%2E%2E", "a%2fb", "a%3Fb", "a%23b", "%252E", "a%25zz"} {
		if r := e.do(req{method: "GET", path: "/student/" + id + "/english/grade", token: alice}); r.status != 400 {
			t.Errorf("%s: %d, want 400", id, r.status)
		}
	}
}

func TestHeaderLimitIs16KiB(t *testing.T) {
	e := newEnv(t)
	send := func(size int) int {
		conn, err := net.Dial("tcp", strings.TrimPrefix(e.url, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: %s\r\n\r\n", strings.Repeat("a", size))
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if got := send(14 << 10); got != 200 {
		t.Errorf("14 KiB of headers: %d", got)
	}
	if got := send(17 << 10); got != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("17 KiB of headers: %d", got)
	}
}

func TestJSONKeysAreExact(t *testing.T) {
	e := newEnv(t)
	bob := token(t, "bob", "professor")
	for _, body := range []string{`{"GRADE":"A"}`, `{"Grade":"A"}`, `{"grade":"E","grade":"A"}`, `{"grade":"A","grade":"A"}`} {
		if r := e.do(req{method: "POST", path: "/student/ghost/english/grade", token: bob, body: body}); r.status != 400 {
			t.Errorf("%s: %d, want 400", body, r.status)
		}
	}
}

func TestAcceptPrecedence(t *testing.T) {
	e := newEnv(t)
	seedGrades(t, e)
	alice := token(t, "alice", "student")
	for accept, want := range map[string]int{
		" ":                             200, // empty value: no preference
		"application/json;q=0, */*":     406,
		"*/*;q=0.1, application/json":   200,
		"application/*;q=0, */*":        406,
		"application/json;q=0.001, */*": 200,
	} {
		if r := e.do(req{method: "GET", path: "/student/alice/english/grade", token: alice, header: map[string]string{"Accept": accept}}); r.status != want {
			t.Errorf("Accept %q: %d, want %d", accept, r.status, want)
		}
	}
}

func TestSubWithControlCharactersIsRefused(t *testing.T) {
	e := newEnv(t)
	tok := sign(t, jwt.SigningMethodHS256, testSecret, "", jwt.MapClaims{"sub": "alice\x00x", "role": "student", "exp": time.Now().Add(time.Hour).Unix()})
	if r := e.do(req{method: "GET", path: "/student/alice/english/grade", token: tok}); r.status != 401 {
		t.Fatalf("sub with NUL: %d", r.status)
	}
}

// TestAuditLinesNameTheRequest: the stores' audit lines (a transfer here)
// carry the id of the request that caused them.
func TestAuditLinesNameTheRequest(t *testing.T) {
	e := newEnv(t)
	seedAccounts(t, e)
	r := e.do(req{method: "POST", path: "/rs/transfer/from/1001/to/2002/amount/1", token: token(t, "alice", "customer"),
		header: map[string]string{"X-Request-ID": "audit-me-42"}})
	if r.status != 201 {
		t.Fatalf("transfer: %d", r.status)
	}
	for _, line := range strings.Split(e.logs.String(), "\n") {
		if strings.Contains(line, `"msg":"transfer"`) && strings.Contains(line, `"audit":true`) {
			if !strings.Contains(line, `"request_id":"audit-me-42"`) {
				t.Fatalf("transfer audit line without the request id: %s", line)
			}
			return
		}
	}
	t.Fatalf("no transfer audit line in:\n%s", e.logs.String())
}
