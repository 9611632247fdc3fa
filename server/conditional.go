package server

import (
	"bytes"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/cespare/xxhash/v2"
	"github.com/labstack/echo/v4"
)

// conditional gives a successful GET or HEAD a strong ETag computed from
// the bytes this caller receives (its filtered view, after every
// rewrite), and answers an If-None-Match that matches it with 304 and no
// body (docs/contract.md §2, "Conditional reads"). A handler that sets its
// own ETag (a grade's version, "3") keeps it.
//
// The answer is held in a pooled buffer until the handler returns, since
// the tag goes in a header before the body; so it is for routes whose
// answers are whole documents already (JSON, the pages), never for the
// streamed artifact downloads. On the build routes the document comes
// from the cache while it is fresh, so a 304 costs no upstream call.
func conditional(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			return next(c)
		}
		res := c.Response()
		orig := res.Writer
		w := buffers.Get().(*bufferedWriter)
		w.ResponseWriter = orig
		defer w.release()
		res.Writer = w
		err := next(c)
		res.Writer = orig
		if err != nil {
			if res.Committed {
				// The handler started an answer, then failed: nothing of
				// it was sent, so the error is answered in full.
				res.Committed, res.Status, res.Size = false, 0, 0
			}
			return err
		}
		if !w.wroteHeader {
			return nil
		}
		if w.status != http.StatusOK {
			return w.send(w.status)
		}
		h := orig.Header()
		etag := h.Get("ETag")
		if etag == "" {
			etag = strongTag(w.body.Bytes())
			h.Set("ETag", etag)
		}
		if noneMatch(r.Header.Values("If-None-Match"), etag) {
			h.Del(echo.HeaderContentType)
			h.Del(echo.HeaderContentLength)
			res.Status, res.Size = http.StatusNotModified, 0
			orig.WriteHeader(http.StatusNotModified)
			return nil
		}
		return w.send(http.StatusOK)
	}
}

// strongTag is the ETag of body: 64 bits of xxhash, hex, quoted. Fast
// (several GB/s) and, for the versions of one resource a client holds,
// as unlikely to collide as anyone could notice.
func strongTag(body []byte) string {
	var sum [8]byte
	v := xxhash.Sum64(body)
	for i := range sum {
		sum[i] = byte(v >> (56 - 8*i))
	}
	var out [18]byte
	out[0], out[17] = '"', '"'
	hex.Encode(out[1:17], sum[:])
	return string(out[:])
}

// noneMatch evaluates If-None-Match against etag with the weak comparison
// RFC 9110 §13.1.2 prescribes for it: "*" matches any current
// representation, and W/"x" matches "x". The header may be a list, or
// repeated; an entry that is not a tag matches nothing.
func noneMatch(values []string, etag string) bool {
	opaque := strings.TrimPrefix(etag, "W/")
	for _, v := range values {
		for part := range strings.SplitSeq(v, ",") {
			part = strings.TrimSpace(part)
			if part == "*" || strings.TrimPrefix(part, "W/") == opaque {
				return true
			}
		}
	}
	return false
}

// bufferedWriter holds an answer until its ETag is known.
type bufferedWriter struct {
	http.ResponseWriter
	status      int
	wroteHeader bool
	body        bytes.Buffer
}

func (w *bufferedWriter) WriteHeader(status int) {
	if !w.wroteHeader {
		w.status, w.wroteHeader = status, true
	}
}

func (w *bufferedWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(p)
}

// send writes the held answer with its length (so that neither a large
// body nor a HEAD turns into a chunked answer).
func (w *bufferedWriter) send(status int) error {
	if bodyAllowed(status) {
		w.Header().Set(echo.HeaderContentLength, strconv.Itoa(w.body.Len()))
	}
	w.ResponseWriter.WriteHeader(status)
	if w.body.Len() == 0 {
		return nil
	}
	_, err := w.ResponseWriter.Write(w.body.Bytes())
	return err
}

func bodyAllowed(status int) bool {
	return status >= 200 && status != http.StatusNoContent && status != http.StatusNotModified
}

// maxPooledBuffer keeps one huge answer from pinning its buffer forever.
const maxPooledBuffer = 1 << 20

var buffers = sync.Pool{New: func() any { return new(bufferedWriter) }}

func (w *bufferedWriter) release() {
	if w.body.Cap() > maxPooledBuffer {
		return
	}
	w.ResponseWriter, w.status, w.wroteHeader = nil, 0, false
	w.body.Reset()
	buffers.Put(w)
}
