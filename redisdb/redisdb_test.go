package redisdb

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/internal/testkit/testredis"
)

func TestMain(m *testing.M) { testredis.Main(m) }

func TestOpen(t *testing.T) {
	if _, err := Open(Config{}); !errors.Is(err, ErrNotConfigured) {
		t.Fatalf("no settings: %v", err)
	}
	if _, err := Open(Config{URL: "mysql://x"}); err == nil || !strings.Contains(err.Error(), "FACADE_REDIS_URL") {
		t.Fatalf("bad URL: %v", err)
	}
	for _, c := range []Config{{Addrs: []string{"127.0.0.1:1"}}, {Addrs: []string{"127.0.0.1:1"}, Master: "m"}} {
		rdb, err := Open(c)
		if err != nil {
			t.Fatal(err)
		}
		rdb.Close()
	}
}

// TestUnavailableIsToldApart: "Redis is down" (503) is distinguished from
// a reply Redis gave (a bug or bad data: 500) and from a missing key.
func TestUnavailableIsToldApart(t *testing.T) {
	ctx := context.Background()
	up := testredis.Client(t)
	down, err := Open(Config{URL: "redis://127.0.0.1:1/0"})
	if err != nil {
		t.Fatal(err)
	}
	defer down.Close()
	cases := map[string]struct {
		err  error
		want bool
	}{
		"nil":           {nil, false},
		"missing key":   {up.Get(ctx, "nope").Err(), false},
		"error reply":   {up.Do(ctx, "NOSUCHCOMMAND").Err(), false},
		"connection":    {down.Ping(ctx).Err(), true},
		"loading reply": {serverReply("LOADING Redis is loading the dataset in memory"), true},
		"canceled":      {context.Canceled, false},
		// A store that found a reply corrupt has said what it is: a 500,
		// never "try again later".
		"corrupt reply": {facade.Wrap(facade.ErrInternal, errors.New("accounts: corrupt data: transfer reply")), false},
		"already 503":   {facade.Wrap(facade.ErrStoreUnavailable, down.Ping(ctx).Err()), true},
	}
	for name, c := range cases {
		if got := IsUnavailable(c.err); got != c.want {
			t.Errorf("%s (%v): IsUnavailable = %v, want %v", name, c.err, got, c.want)
		}
		if c.err == nil {
			continue
		}
		// What a client is told: 503 (the HTTP table adds Retry-After), or a plain 500.
		var fe *facade.Error
		if !errors.As(Error(c.err), &fe) || errors.Is(fe, facade.ErrStoreUnavailable) != c.want ||
			(!c.want && !errors.Is(fe, facade.ErrInternal)) {
			t.Errorf("%s: Error() = %+v", name, fe)
		}
	}
	if Error(nil) != nil {
		t.Error("Error(nil) is not nil")
	}
}

func TestAppendOnly(t *testing.T) {
	on, err := AppendOnly(context.Background(), testredis.Client(t))
	if err != nil || on {
		t.Fatalf("shared test server (no AOF): %v %v", on, err)
	}
	aof := testredis.Start(t, testredis.Options{AOF: true})
	if on, err := AppendOnly(context.Background(), aof.Client(t)); err != nil || !on {
		t.Fatalf("AOF server: %v %v", on, err)
	}
}

// serverReply is an error reply as go-redis reports one (redis.Error).
type serverReply string

func (e serverReply) Error() string { return string(e) }
func (serverReply) RedisError()     {}
