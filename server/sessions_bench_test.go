package server_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/facade-dev/facade/internal/testkit/testsignin"
)

// BenchmarkSessionRequest measures what a session costs a request: GET
// /auth/me on the session cookie (one Redis GET of the record) next to
// the same request on a bearer token (verified once, then cached: no
// Redis), alternating in the same run over one keep-alive connection
// each, and a bare Redis GET of the same record size for scale. Reports
// µs per request of each and the difference.
//
//	go test -run '^$' -bench SessionRequest -benchtime 5000x ./server
func BenchmarkSessionRequest(b *testing.B) {
	si := &signInEnv{}
	e := newEnv(b, withSignIn(si), withPageOrigin())
	br := testsignin.NewBrowser(b)
	if resp := br.SignIn(e.url, "bob", "/ui/"); resp.StatusCode != http.StatusSeeOther {
		b.Fatalf("sign-in: %d", resp.StatusCode)
	}
	cookie := br.Cookie(e.url, "facade-session")
	host := e.url[len("http://"):]
	session := []byte(fmt.Sprintf("GET /auth/me HTTP/1.1\r\nHost: %s\r\nSec-Fetch-Site: same-origin\r\nCookie: %s=%s\r\n\r\n", host, cookie.Name, cookie.Value))
	bearer := []byte(fmt.Sprintf("GET /auth/me HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n\r\n", host, token(b, "bob", "professor")))
	sc, bc := dialRaw(b, e.url), dialRaw(b, e.url)
	ctx := context.Background()
	record, err := e.rdb.Keys(ctx, "facade:session:id:*").Result()
	if err != nil || len(record) != 1 {
		b.Fatalf("session records: %v %v", record, err)
	}
	var tSession, tBearer, tRedis time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if st, err := bc.do(bearer); err != nil || st != 200 {
			b.Fatalf("bearer: %d %v", st, err)
		}
		t1 := time.Now()
		if st, err := sc.do(session); err != nil || st != 200 {
			b.Fatalf("session: %d %v", st, err)
		}
		t2 := time.Now()
		if err := e.rdb.Get(ctx, record[0]).Err(); err != nil {
			b.Fatal(err)
		}
		t3 := time.Now()
		tBearer += t1.Sub(t0)
		tSession += t2.Sub(t1)
		tRedis += t3.Sub(t2)
	}
	b.StopTimer()
	us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(b.N) / 1000 }
	b.ReportMetric(us(tBearer), "bearer_us")
	b.ReportMetric(us(tSession), "session_us")
	b.ReportMetric(us(tSession)-us(tBearer), "session_extra_us")
	b.ReportMetric(us(tRedis), "redis_get_us")
}
