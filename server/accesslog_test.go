package server_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/facade-dev/facade/internal/testkit/testclock"
	"github.com/facade-dev/facade/internal/testkit/testlog"
)

// linesOf returns the log lines (decoded) that carry request id id.
func linesOf(t *testing.T, e *env, id string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(e.logs.String(), "\n") {
		if !strings.Contains(line, `"request_id":"`+id+`"`) {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line is not JSON: %s", line)
		}
		out = append(out, m)
	}
	return out
}

// TestEveryAuditedRequestWritesOneLineWithItsAudit: a transfer, a grade
// change and a denial are each audited on the request's one access line
// (principal, event, what, outcome), not on a second line.
func TestEveryAuditedRequestWritesOneLineWithItsAudit(t *testing.T) {
	e := newEnv(t)
	seedAccounts(t, e)
	seedGrades(t, e)
	alice, bob := token(t, "alice", "customer"), token(t, "bob", "professor")
	cases := []struct {
		name   string
		r      req
		status int
		want   map[string]any
	}{
		{"transfer", req{method: "POST", path: "/rs/transfer/from/1001/to/2002/amount/1", token: alice}, 201,
			map[string]any{"event": "transfer", "principal": "alice", "from": "1001", "to": "2002", "outcome": "created"}},
		{"grade change", req{method: "PUT", path: "/student/alice/english/grade", token: bob, body: `{"grade":"A"}`}, 200,
			map[string]any{"principal": "bob"}},
		{"denial", req{method: "GET", path: "/rs/account/2002", token: alice}, 403,
			map[string]any{"event": "authorization denied", "principal": "alice", "target": "account:2002"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			id := "one-line-" + strings.ReplaceAll(c.name, " ", "-")
			c.r.header = map[string]string{"X-Request-ID": id}
			if r := e.do(c.r); r.status != c.status {
				t.Fatalf("%s: %d %s", c.r.path, r.status, r.body)
			}
			lines := linesOf(t, e, id)
			if len(lines) != 1 {
				t.Fatalf("%d log lines for request %s, want 1: %v", len(lines), id, lines)
			}
			l := lines[0]
			if l["msg"] != "request" || l["audit"] != true || l["event"] == nil || l["status"] != float64(c.status) {
				t.Fatalf("access line without its audit record: %v", l)
			}
			for k, v := range c.want {
				if l[k] != v {
					t.Errorf("%s = %v, want %v in %v", k, l[k], v, l)
				}
			}
			if c.name == "transfer" && l["transfer_id"] == "" || c.name == "transfer" && l["transfer_id"] == nil {
				t.Errorf("transfer line without transfer_id: %v", l)
			}
		})
	}
}

// TestPlainRequestWritesOneLineWithoutAudit: a read that changes nothing
// and is allowed is one access line, not marked as audit.
func TestPlainRequestWritesOneLineWithoutAudit(t *testing.T) {
	e := newEnv(t)
	seedAccounts(t, e)
	r := e.do(req{method: "GET", path: "/rs/account/1001/balance", token: token(t, "alice", "customer"),
		header: map[string]string{"X-Request-ID": "plain-read"}})
	if r.status != 200 {
		t.Fatalf("balance: %d %s", r.status, r.body)
	}
	lines := linesOf(t, e, "plain-read")
	if len(lines) != 1 || lines[0]["msg"] != "request" || lines[0]["audit"] != nil || lines[0]["principal"] != "alice" {
		t.Fatalf("log lines: %v; want one access line naming alice, no audit", lines)
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
		if strings.Contains(line, `"event":"transfer"`) && strings.Contains(line, `"audit":true`) {
			if !strings.Contains(line, `"request_id":"audit-me-42"`) {
				t.Fatalf("transfer audit line without the request id: %s", line)
			}
			return
		}
	}
	t.Fatalf("no transfer audit line in:\n%s", e.logs.String())
}

// TestLogLinesAreStampedByTheServersClock: the access line and a line the
// server logs during a request (a refused token) carry the time of the
// clock the server was handed, not the machine's: lines and the
// latencies beside them come from one clock.
func TestLogLinesAreStampedByTheServersClock(t *testing.T) {
	clock := testclock.New()
	logs := &testlog.Buffer{}
	e := newEnv(t, withClock(clock.Now), withProductionLog(logs))
	e.do(req{method: "GET", path: "/rs/account", token: "not-a-token"})
	e.do(req{method: "GET", path: "/healthz"})
	want := clock.Now().UTC().Format(time.RFC3339)
	var msgs []string
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var m struct{ Time, Msg string }
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line is not JSON: %s", line)
		}
		if m.Time != want {
			t.Errorf("%q stamped %s, not the server's clock's %s", m.Msg, m.Time, want)
		}
		msgs = append(msgs, m.Msg)
	}
	if !slices.Contains(msgs, "authentication failed") || !slices.Contains(msgs, "request") {
		t.Errorf("lines %q: want the refusal and the access lines", msgs)
	}
	// The access line is the server's own record: its time is the clock's
	// whatever handler writes it (here slog's, which keeps a record's time).
	plain := newEnv(t, withClock(clock.Now))
	plain.do(req{method: "GET", path: "/healthz"})
	if !strings.Contains(plain.logs.String(), `"time":"`+want+`","level":"INFO","msg":"request"`) {
		t.Errorf("the access line is not stamped %s:\n%s", want, plain.logs.String())
	}
}
