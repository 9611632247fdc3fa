package problem

import (
	"bytes"
	"embed"
	"html/template"
	"net/http"
)

// The pages at /problems/<code> describe each cause for people: a body's
// type is the address of its page. They are built once from the table, so
// a code cannot exist without its page, and they hold no script or style:
// the page's strict Content-Security-Policy applies as is, and they wear
// the page's own style sheet and icon (from /ui/, the same origin).

type pageView struct {
	Code, Title, Detail, Advice string
	Status                      int
	Reasons                     []reasonView
}

type reasonView struct{ Code, Detail string }

// templates are the pages' HTML (templates/page.html for one code,
// templates/index.html for the list, both starting with top.html's head
// and header); html/template escapes what the table says.
//
//go:embed templates/*.html
var templateFiles embed.FS

var templates = template.Must(template.ParseFS(templateFiles, "templates/*.html"))

// pages holds every page by wire code; index is the list of them.
var pages, index = buildPages()

func buildPages() (map[string][]byte, []byte) {
	out := make(map[string][]byte, len(problems))
	var all []pageView
	for _, code := range Codes() {
		kind := problems[code]
		v := pageView{Code: Wire(code), Title: http.StatusText(kind.status), Detail: kind.detail,
			Advice: kind.advice, Status: kind.status}
		for _, r := range Reasons(code) {
			v.Reasons = append(v.Reasons, reasonView{Code: Wire(r), Detail: kind.reasons[r]})
		}
		var b bytes.Buffer
		if err := templates.ExecuteTemplate(&b, "page.html", v); err != nil {
			panic(err) // a template that cannot run on the table is a build error
		}
		out[v.Code] = b.Bytes()
		all = append(all, v)
	}
	var b bytes.Buffer
	if err := templates.ExecuteTemplate(&b, "index.html", all); err != nil {
		panic(err)
	}
	return out, b.Bytes()
}

// Page returns the HTML page of a wire code ("insufficient-funds").
func Page(wire string) ([]byte, bool) {
	b, ok := pages[wire]
	return b, ok
}

// Index returns the HTML page listing every code.
func Index() []byte { return index }
