package proxy

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/cache"
	"github.com/facade-dev/facade/internal/etag"
	"github.com/facade-dev/facade/upstream"
)

// A job's build log (/download/{K-P-J}/build_logs/{K-P-J-N}.log) is a
// document like the others (freshness.go): while the
// job is queued or running it grows, and it is read upstream at most once
// per live interval however many watch it, on however many instances; once
// the job is finished it is kept for the finished lifetime. The job's state
// comes from its job result, itself a cached document. A Range request (a
// page tailing the log reads on from its last byte) is answered from the
// same cached log, as Bamboo would answer it: 206 with Content-Range, or
// 416 past the end. A log larger than maxCachedLog, or a job result Bamboo
// does not answer, falls back to streaming from upstream, as any artifact.

// maxCachedLog bounds a log held in the shared cache (and read whole into
// memory to get there); a longer one is streamed.
const maxCachedLog = 8 << 20

var errLogTooLarge = errors.New("build log larger than the cache holds")

// jobResultRoute is the table's job result route, whose document says
// whether a job still runs.
var jobResultRoute = func() *Route {
	for i := range Routes {
		if Routes[i].Name == "job_result" {
			return &Routes[i]
		}
	}
	panic("proxy: no job_result route")
}()

// cachedLog returns target's log from the shared cache when it is a build
// log, else ok false (stream it). The caller authorized the
// plan and set the redirect check on ctx.
func (h *Handler) cachedLog(ctx context.Context, target artifactTarget, req *Request) (d *Download, ok bool, err error) {
	job, isLog := buildLogJob(target.path)
	if !isLog {
		return nil, false, nil
	}
	rt := jobResultRoute
	state, _, err := h.docs.get(ctx, docKey(rt, job, routeQuery{}), h.fetcher(rt, job, routeQuery{}), h.fresh.lifetime(rt, job))
	if err != nil {
		return nil, false, nil // Bamboo knows no such job result: the log is served as it has it
	}
	life := h.fresh.resultLife(state.Body)
	entry, _, err := h.docs.get(ctx, "log:"+target.path, func(ctx context.Context) (upstream.Document, error) {
		body, err := h.readLog(ctx, target.path)
		return upstream.Document{Body: body}, err // a log is no JSON: never parsed
	}, func([]byte) time.Duration { return life })
	if errors.Is(err, errLogTooLarge) {
		return nil, false, nil
	}
	if err != nil {
		return nil, true, err
	}
	d = logDownload(entry, target.name)
	return d, true, d.cut(upstream.ParseRange(req.Range, req.IfRange))
}

// buildLogJob reads the job result a build log path names:
// /download/K-P-J/build_logs/K-P-J-N.log.
func buildLogJob(path string) (facade.BuildKey, bool) {
	segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
	if len(segs) != 4 || segs[0] != "download" || segs[2] != "build_logs" {
		return facade.BuildKey{}, false
	}
	name, ok := strings.CutSuffix(segs[3], ".log")
	if !ok || !strings.HasPrefix(name, segs[1]+"-") {
		return facade.BuildKey{}, false
	}
	k, err := facade.ParseBuildKey(name)
	return k, err == nil && keyKind(k) == KeyJobResult
}

// readLog reads a whole log from upstream, refusing one over maxCachedLog
// (by its length when Bamboo says it, else while reading) and any HTML
// page (a login page a redirect led to).
func (h *Handler) readLog(ctx context.Context, path string) ([]byte, error) {
	stream, err := h.up.ArtifactRange(ctx, path, upstream.Range{})
	if err != nil {
		return nil, err
	}
	defer stream.Body.Close()
	if isHTML(stream.ContentType) {
		return nil, upstreamBad(errHTMLAnswer)
	}
	if stream.ContentLength > maxCachedLog {
		return nil, errLogTooLarge
	}
	body, err := io.ReadAll(io.LimitReader(stream.Body, maxCachedLog+1))
	if err != nil {
		return nil, asFacadeError(err)
	}
	if len(body) > maxCachedLog {
		return nil, errLogTooLarge
	}
	return body, nil
}

// logDownload is a cached log as a Download: the whole file, tagged with
// its own strong ETag (so a page polling it with If-None-Match gets a 304
// while it did not grow), and where it came from (X-Cache).
func logDownload(e cache.Entry, name string) *Download {
	stream := &upstream.ArtifactStream{
		Body: io.NopCloser(bytes.NewReader(nil)), ContentType: "text/plain; charset=utf-8",
		ContentLength: int64(len(e.Body)), Filename: name, Status: http.StatusOK, ETag: etag.Strong(e.Body), AcceptRanges: true,
	}
	return &Download{stream: stream, name: name, first: e.Body, done: true, ready: true, cached: e.Status}
}

// cut narrows a cached log's answer to the one byte range part names, as
// net/http and Bamboo answer a single range: 206 with Content-Range, or 416
// (ErrRangeNotSatisfiable, "bytes */size") when it starts past the end.
// No range, or an If-Range that is not this log's tag, answers the whole
// log.
func (d *Download) cut(part upstream.Range) error {
	if part.Bytes == "" || part.IfRange != "" && part.IfRange != d.stream.ETag {
		return nil
	}
	body, size := d.first, int64(len(d.first))
	first, last, _ := strings.Cut(part.Bytes, "-")
	start, _ := strconv.ParseInt(first, 10, 64)
	end := size - 1
	switch {
	case first == "": // the last N bytes
		n, _ := strconv.ParseInt(last, 10, 64)
		start = max(size-n, 0)
	case last != "":
		l, _ := strconv.ParseInt(last, 10, 64)
		end = min(l, size-1)
	}
	if start >= size {
		d.stream.Status, d.stream.ContentRange, d.ready = http.StatusRequestedRangeNotSatisfiable, "bytes */"+strconv.FormatInt(size, 10), false
		d.first = nil
		return facade.ErrRangeNotSatisfiable
	}
	d.first = body[start : end+1]
	d.stream.Status, d.stream.ContentLength = http.StatusPartialContent, end-start+1
	d.stream.ContentRange = "bytes " + strconv.FormatInt(start, 10) + "-" + strconv.FormatInt(end, 10) + "/" + strconv.FormatInt(size, 10)
	return nil
}

// Cached reports where a download read from the shared cache came from
// (a build log: cachedLog), for X-Cache and conditional requests; ok is
// false for a file streamed from upstream.
func (d *Download) Cached() (status cache.Status, ok bool) { return d.cached, d.cached != "" }
