package server

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/facade-dev/facade/internal/etag"
)

// BenchmarkConditional measures what the ETag costs a read: the same
// handler (a 64 KiB document, about a large filtered build list) served
// plainly, through conditional, and answered 304 through it.
func BenchmarkConditional(b *testing.B) {
	doc := bytes.Repeat([]byte(`{"key":"PROJ-CORE-6","state":"Successful"},`), 64<<10/43)
	h := func(c echo.Context) error { return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, doc) }
	e := echo.New()
	serve := func(b *testing.B, handler echo.HandlerFunc, inm string) {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		if inm != "" {
			req.Header.Set("If-None-Match", inm)
		}
		b.SetBytes(int64(len(doc)))
		b.ReportAllocs()
		for b.Loop() {
			rec := httptest.NewRecorder()
			c := e.NewContext(req, rec)
			if err := handler(c); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("plain", func(b *testing.B) { serve(b, h, "") })
	b.Run("etag", func(b *testing.B) { serve(b, conditional(h), "") })
	b.Run("304", func(b *testing.B) { serve(b, conditional(h), etag.Strong(doc)) })
}
