package server

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/labstack/echo/v4"

	"github.com/facade-dev/facade/internal/etag"
)

// conditional gives a successful GET or HEAD a strong ETag computed from
// the bytes this caller receives (its filtered view, after every
// rewrite), and answers an If-None-Match that matches it with 304 and no
// body (docs/contract.md §2, "Conditional reads").
//
// An answer the handler tagged itself, with its length, is decided when
// its status is written and then passes straight through: the build
// routes tag each cached view once, when it is built (package proxy, with
// the same etag.Strong), so a warm read is neither copied nor hashed
// again. Any other answer is held in a pooled buffer until the handler
// returns, since the tag goes in a header before the body; so the
// middleware is for routes whose answers are whole documents already
// (JSON, the pages), never for the streamed artifact downloads. A handler
// that sets its own ETag (a grade's version, "3") keeps it. On the build
// routes the document comes from the cache while it is fresh, so a 304
// costs no upstream call.
func conditional(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			return next(c)
		}
		res := c.Response()
		orig := res.Writer
		w := buffers.Get().(*bufferedWriter)
		w.ResponseWriter, w.request = orig, r
		defer w.release()
		res.Writer = w
		err := next(c)
		res.Writer = orig
		if w.passed {
			if w.notModified {
				res.Status, res.Size = http.StatusNotModified, 0
			}
			// Already sent: an error now is the connection's, and the
			// error path only logs it.
			return err
		}
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
		tag := h.Get("ETag")
		if tag == "" {
			tag = etag.Strong(w.body.Bytes())
			h.Set("ETag", tag)
		}
		if noneMatch(r.Header.Values("If-None-Match"), tag) {
			notModified(orig, h)
			res.Status, res.Size = http.StatusNotModified, 0
			return nil
		}
		return w.send(http.StatusOK)
	}
}

// notModified answers 304: no body, so no type or length either.
func notModified(w http.ResponseWriter, h http.Header) {
	h.Del(echo.HeaderContentType)
	h.Del(echo.HeaderContentLength)
	w.WriteHeader(http.StatusNotModified)
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

// bufferedWriter holds an answer until its ETag is known, or passes it
// through when the handler gave the tag and the length itself.
type bufferedWriter struct {
	http.ResponseWriter
	request     *http.Request
	status      int
	wroteHeader bool
	passed      bool // the answer went straight to the client
	notModified bool // ... and was a 304: the body is dropped
	body        bytes.Buffer
}

func (w *bufferedWriter) WriteHeader(status int) {
	if w.wroteHeader {
		return
	}
	w.status, w.wroteHeader = status, true
	h := w.ResponseWriter.Header()
	// The map, not Get: "ETag" is not spelled canonically ("Etag").
	tag := first(h["Etag"])
	if status != http.StatusOK || tag == "" || first(h["Content-Length"]) == "" {
		return
	}
	w.passed = true
	if noneMatch(w.request.Header.Values("If-None-Match"), tag) {
		w.notModified = true
		notModified(w.ResponseWriter, h)
		return
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *bufferedWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	switch {
	case w.notModified:
		return len(p), nil
	case w.passed:
		return w.writeGathered(p)
	}
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
	_, err := w.writeGathered(w.body.Bytes())
	return err
}

// writeGathered writes a whole answer's body, the headers still unsent,
// with the connection's writes gathered into one (answeringConn.gather);
// a body that fits in net/http's buffer leaves in one write anyway.
func (w *bufferedWriter) writeGathered(p []byte) (n int, err error) {
	if len(p) < gatherFrom {
		return w.ResponseWriter.Write(p)
	}
	c := gatherer(w.request)
	c.gather()
	defer func() {
		if rerr := c.release(); err == nil && rerr != nil {
			n, err = 0, rerr
		}
	}()
	return w.ResponseWriter.Write(p)
}

// gatherFrom is the body size from which net/http writes an answer in two
// parts (its connection buffer is 4 KiB, headers included).
const gatherFrom = 2 << 10

// first is Header.Get's answer from the values of a canonical key.
func first(vs []string) string {
	if len(vs) == 0 {
		return ""
	}
	return vs[0]
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
	w.ResponseWriter, w.request = nil, nil
	w.status, w.wroteHeader, w.passed, w.notModified = 0, false, false, false
	w.body.Reset()
	buffers.Put(w)
}
