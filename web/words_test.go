package web_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/server/problem"
)

var wordKey = regexp.MustCompile(`(?m)^\s*'([a-z-]+)':`)

// block returns the keys of the object literal that starts at start in
// src and ends at the next line holding only its closing brace.
func block(t *testing.T, src, start string) map[string]bool {
	t.Helper()
	i := strings.Index(src, start)
	if i < 0 {
		t.Fatalf("words.js has no %q", start)
	}
	body, _, ok := strings.Cut(src[i:], "\n}")
	if !ok {
		body, _, ok = strings.Cut(src[i:], "\n  }")
	}
	if !ok {
		t.Fatalf("words.js: %q does not end", start)
	}
	keys := map[string]bool{}
	for _, m := range wordKey.FindAllStringSubmatch(body, -1) {
		keys[m[1]] = true
	}
	return keys
}

// TestEveryCodeHasWords: the page tells a person what to do next for
// every code errors.go declares (a code without words gets the generic
// "The request failed"). A gradebook row's codes are explained per row.
func TestEveryCodeHasWords(t *testing.T) {
	b, err := os.ReadFile("static/js/words.js")
	if err != nil {
		t.Fatal(err)
	}
	src := string(b)
	words, rows := block(t, src, "const words = {"), block(t, src, "export function rowWords(code) {")
	for _, c := range facade.Codes() {
		wire := problem.Wire(c)
		switch c {
		case facade.ErrDuplicateStudent.Code, facade.ErrNotInClass.Code:
			if !rows[wire] {
				t.Errorf("%s: no words in rowWords (web/static/js/words.js)", wire)
			}
		default:
			if !words[wire] {
				t.Errorf("%s: no words in web/static/js/words.js", wire)
			}
		}
	}
	for k := range words {
		if k != "network" && !problemCode(k) {
			t.Errorf("words.js explains %q, which is no code", k)
		}
	}
}

func problemCode(wire string) bool {
	for _, c := range facade.Codes() {
		if problem.Wire(c) == wire {
			return true
		}
	}
	return false
}
