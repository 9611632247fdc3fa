// Package web is Facade's browser page, served at /ui/: index.html,
// app.css and ES modules under static/js (main.js, the API layer api.js,
// one module per view in views/, the build views' shared parts in
// views/buildparts.js, a class page's gradebook upload and posting in
// views/gradebook.js and views/posting.js), embedded in the binary (no CDN, no
// bundler, no build step). The page is a client of the public API like any
// other: it sends the session cookie or a pasted bearer token, an
// X-XSRF-TOKEN header on every change, If-Match on grade edits,
// If-None-Match when it asks again about builds that can still change
// (every 2 s, only while its tab is visible) and an Idempotency-Key
// per transfer attempt, and it only follows links that point at its own
// origin (docs/contract.md §9).
//
// The server mounts Lookup on /ui/ without authentication (the page is
// loaded before a token is pasted) and answers it with CSP instead of the
// API's policy.
package web

import (
	"embed"
	"io/fs"
	"mime"
	"path"
	"strings"
)

// CSP is the Content-Security-Policy of the page's responses: scripts,
// styles and API calls from its own origin only, nothing inline, no
// plugins, frames, forms posted elsewhere or base-URL tricks. The API's
// responses keep their own, stricter policy.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; " +
	"img-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'"

// The error codes' words in static/js/words.js are written from
// server/problem's table, the grade menu's scale in
// static/js/views/grades.js from grades.Scale.
//
//go:generate go run ../tools/gencodes static/js/words.js static/js/views/grades.js

//go:embed static
var static embed.FS

// File is one embedded file, ready to send.
type File struct {
	Body        []byte
	ContentType string
}

var files = load()

func load() map[string]File {
	out := map[string]File{}
	err := fs.WalkDir(static, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := static.ReadFile(p)
		if err != nil {
			return err
		}
		ct := mime.TypeByExtension(path.Ext(p))
		if ct == "" {
			ct = "application/octet-stream"
		}
		out[strings.TrimPrefix(p, "static/")] = File{Body: body, ContentType: ct}
		return nil
	})
	if err != nil {
		panic("web: embedded files unreadable: " + err.Error()) // a build defect, not a runtime condition
	}
	return out
}

// Lookup returns the file for a path below /ui/ ("" is the page itself).
func Lookup(name string) (File, bool) {
	if name == "" {
		name = "index.html"
	}
	f, ok := files[name]
	return f, ok
}
