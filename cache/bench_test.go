package cache

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/facade-dev/facade/internal/testkit/testredis"
)

// BenchmarkWarmHit compares a cache HIT with a bare Redis GET of the same
// stored bytes on the same connection, in the same run: the difference is
// the cache's own cost (key hashing, header decoding, metrics). The
// cache.Get line reports x-redis-GET, its time as a multiple of the GET's.
func BenchmarkWarmHit(b *testing.B) {
	ctx := context.Background()
	rdb := testredis.Client(b)
	c := New(rdb, Config{TTL: 1 << 40})
	for _, size := range []int{1 << 10, 64 << 10} {
		key := fmt.Sprintf("projects:bench-%d", size)
		body := bytes.Repeat([]byte(`{"key":"PROJ","name":"Project"},`), size/32)
		fetch := func(context.Context) ([]byte, error) { return body, nil }
		if _, err := c.Get(ctx, key, fetch); err != nil {
			b.Fatal(err)
		}
		dk := docKey(key)

		var getNs float64
		b.Run(fmt.Sprintf("%dKiB/redis.GET", size>>10), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(size))
			for i := 0; i < b.N; i++ {
				if _, err := rdb.Get(ctx, dk).Bytes(); err != nil {
					b.Fatal(err)
				}
			}
			getNs = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		})
		b.Run(fmt.Sprintf("%dKiB/cache.Get", size>>10), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(size))
			for i := 0; i < b.N; i++ {
				e, err := c.Get(ctx, key, fetch)
				if err != nil || e.Status != Hit {
					b.Fatalf("got %s, %v; want a HIT", e.Status, err)
				}
			}
			ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			b.ReportMetric(ns/getNs, "x-redis-GET")
		})
	}
}
