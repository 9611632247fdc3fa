package demoidp

import (
	"context"
	_ "embed"
	"html/template"
	"net/http"
)

// loginPage is the provider's sign-in page: every demo person, one button
// each. It works with no script and under a strict CSP.
type loginPage struct {
	store    *storage
	callback func(context.Context, string) string
	csp      string
	apps     []string // the origins of the applications it signs in to
}

//go:embed login.html
var loginHTML string

//go:embed login.css
var loginCSS []byte

// faviconSVG is the icon every page names: without one a browser asks
// for /favicon.ico and logs the miss in the console.
//
//go:embed favicon.svg
var faviconSVG []byte

var loginTemplate = template.Must(template.New("login").Parse(loginHTML))

func (l *loginPage) headers(w http.ResponseWriter, contentType string) {
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Content-Security-Policy", l.csp)
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
}

func (l *loginPage) show(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("authRequestID")
	if _, err := l.store.AuthRequestByID(r.Context(), id); err != nil {
		l.deadEnd(w, http.StatusBadRequest, "This sign-in has expired or is unknown", "Start again from the application: its sign-in brings you back here.")
		return
	}
	var people []Person
	for _, k := range l.store.order {
		people = append(people, l.store.people[k])
	}
	l.headers(w, "text/html; charset=utf-8")
	_ = loginTemplate.Execute(w, struct {
		ID     string
		People []Person
	}{id, people})
}

func (l *loginPage) choose(w http.ResponseWriter, r *http.Request) {
	id := r.PostFormValue("id")
	if err := l.store.signIn(id, r.PostFormValue("person")); err != nil {
		l.deadEnd(w, http.StatusBadRequest, "This sign-in has expired or is unknown", "Start again from the application: its sign-in brings you back here.")
		return
	}
	http.Redirect(w, r, l.callback(r.Context(), id), http.StatusSeeOther)
}

func (l *loginPage) style(w http.ResponseWriter, _ *http.Request) {
	l.headers(w, "text/css; charset=utf-8")
	_, _ = w.Write(loginCSS)
}

func (l *loginPage) icon(w http.ResponseWriter, _ *http.Request) {
	l.headers(w, "image/svg+xml")
	_, _ = w.Write(faviconSVG)
}

func (l *loginPage) signedOut(w http.ResponseWriter, _ *http.Request) {
	l.deadEnd(w, http.StatusOK, "Signed out of the demo provider", "You are signed out of the application and of this provider.")
}

// deadEndTemplate is a page where a person's way through the provider
// ends: it says what happened and links back to each application, so
// nobody is left on a bare sentence.
var deadEndTemplate = template.Must(template.New("end").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>{{.Title}}: Facade demo identity provider</title>
<link rel="stylesheet" href="/login.css">
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
</head>
<body>
<main>
  <h1>{{.Title}}</h1>
  <p>{{.Next}}</p>
  <ul>{{range .Apps}}
    <li><a id="back" href="{{.}}/ui/">Back to Facade ({{.}})</a></li>{{end}}
  </ul>
</main>
</body>
</html>
`))

func (l *loginPage) deadEnd(w http.ResponseWriter, status int, title, next string) {
	l.headers(w, "text/html; charset=utf-8")
	w.WriteHeader(status)
	_ = deadEndTemplate.Execute(w, struct {
		Title, Next string
		Apps        []string
	}{title, next, l.apps})
}
