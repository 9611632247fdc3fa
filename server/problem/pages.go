package problem

import (
	"bytes"
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

var pageTemplate = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Code}}: {{.Title}}</title>
<link rel="icon" href="/ui/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/ui/app.css">
</head>
<body>
<header class="top"><p class="brand"><a href="/ui/">Facade</a></p></header>
<main>
<h1>{{.Code}}</h1>
<p>HTTP status {{.Status}} {{.Title}}.</p>
<p>{{.Detail}}</p>
<h2>What to do</h2>
<p>{{.Advice}}</p>
{{- if .Reasons}}
<h2>Rules an input can break</h2>
<p>The answer's <code>errors</code> list names each input that was wrong (<code>parameter</code>) and the rule it broke (<code>code</code>):</p>
<div class="scroll" tabindex="0" role="region" aria-label="Rules"><table>
<thead><tr><th scope="col">code</th><th scope="col">meaning</th></tr></thead>
<tbody>
{{- range .Reasons}}
<tr><td><code>{{.Code}}</code></td><td>{{.Detail}}</td></tr>
{{- end}}
</tbody>
</table></div>
{{- end}}
<p><a href="/problems">Every problem type</a> · <a href="/ui/">Back to the page</a></p>
</main>
</body>
</html>
`))

var indexTemplate = template.Must(template.New("index").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Problem types</title>
<link rel="icon" href="/ui/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/ui/app.css">
</head>
<body>
<header class="top"><p class="brand"><a href="/ui/">Facade</a></p></header>
<main>
<h1>Problem types</h1>
<p>Every error answer is an RFC 9457 problem whose <code>code</code> names its cause; its <code>type</code> is the address of the page describing it.</p>
<div class="scroll" tabindex="0" role="region" aria-label="Problem types"><table>
<thead><tr><th scope="col">code</th><th scope="col">status</th><th scope="col">meaning</th></tr></thead>
<tbody>
{{- range .}}
<tr><td><a href="/problems/{{.Code}}">{{.Code}}</a></td><td>{{.Status}}</td><td>{{.Detail}}</td></tr>
{{- end}}
</tbody>
</table></div>
</main>
</body>
</html>
`))

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
		if err := pageTemplate.Execute(&b, v); err != nil {
			panic(err) // a template that cannot run on the table is a build error
		}
		out[v.Code] = b.Bytes()
		all = append(all, v)
	}
	var b bytes.Buffer
	if err := indexTemplate.Execute(&b, all); err != nil {
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
