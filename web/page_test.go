package web

import (
	"regexp"
	"strings"
	"testing"
)

// TestPageHasNoInlineCode: nothing in the page needs 'unsafe-inline' (no
// inline script or style, no event-handler or style attributes) and
// nothing is loaded from another origin.
func TestPageHasNoInlineCode(t *testing.T) {
	f, ok := Lookup("")
	if !ok {
		t.Fatal("no page")
	}
	html := string(f.Body)
	bad := map[string]*regexp.Regexp{
		"inline script":   regexp.MustCompile(`(?i)<script(?:\s[^>]*)?>\s*[^<\s]`),
		"style element":   regexp.MustCompile(`(?i)<style`),
		"style attribute": regexp.MustCompile(`(?i)\sstyle\s*=`),
		"event handler":   regexp.MustCompile(`(?i)\son[a-z]+\s*=`),
		"other origin":    regexp.MustCompile(`(?i)(?:src|href)\s*=\s*"(?:https?:)?//`),
		"javascript: URL": regexp.MustCompile(`(?i)javascript:`),
	}
	for _, tag := range regexp.MustCompile(`(?i)<script[^>]*>`).FindAllString(html, -1) {
		if !strings.Contains(tag, ` src="`) {
			t.Errorf("script element without src: %s", tag)
		}
	}
	for what, re := range bad {
		if m := re.FindString(html); m != "" {
			t.Errorf("index.html has %s: %q", what, m)
		}
	}
	// The modules build the page with DOM calls only, keep the token in
	// memory only, and import nothing from elsewhere.
	imports := regexp.MustCompile(`(?m)^import .* from '([^']+)'`)
	for name, js := range files {
		if !strings.HasSuffix(name, ".js") {
			continue
		}
		for _, forbidden := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function",
			"localStorage", "sessionStorage", ".style."} {
			if strings.Contains(string(js.Body), forbidden) {
				t.Errorf("%s uses %s", name, forbidden)
			}
		}
		for _, m := range imports.FindAllStringSubmatch(string(js.Body), -1) {
			if !strings.HasPrefix(m[1], "./") && !strings.HasPrefix(m[1], "../") {
				t.Errorf("%s imports %s, not a module of its own", name, m[1])
			}
		}
	}
}

// TestEveryModuleIsPreloaded: index.html asks for every module the page
// imports at once (modulepreload), so the page's start does not wait for
// its imports level by level; a module added without its line fails here.
func TestEveryModuleIsPreloaded(t *testing.T) {
	f, ok := Lookup("")
	if !ok {
		t.Fatal("no page")
	}
	html := string(f.Body)
	for name := range files {
		if !strings.HasPrefix(name, "js/") || !strings.HasSuffix(name, ".js") || name == "js/main.js" {
			continue
		}
		if !strings.Contains(html, `<link rel="modulepreload" href="`+name+`">`) {
			t.Errorf("index.html does not preload %s", name)
		}
	}
}
