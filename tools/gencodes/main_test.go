package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/grades"
	"github.com/facade-dev/facade/server/problem"
)

const document = "../../api/openapi.json"

// TestTheCheckedInDocumentIsGenerated: a code added to the table (or a
// family changed) without `go generate ./api` leaves the document stale.
func TestTheCheckedInDocumentIsGenerated(t *testing.T) {
	doc, err := os.ReadFile(document)
	if err != nil {
		t.Fatal(err)
	}
	out, err := generate(doc)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(doc, out) {
		t.Fatalf("api/openapi.json is stale: run go generate ./api (%d bytes written, %d checked in)", len(out), len(doc))
	}
}

// TestEveryCodeIsInTheDocument: what the generator writes names every
// code of errors.go, each in some family (or answered outside every
// route), named in its family's description.
func TestEveryCodeIsInTheDocument(t *testing.T) {
	doc, err := os.ReadFile(document)
	if err != nil {
		t.Fatal(err)
	}
	inFamily := map[facade.Code]bool{}
	for _, f := range problem.Families() {
		d := description(f)
		for _, c := range f.Codes {
			inFamily[c] = true
			if !strings.Contains(d, problem.Wire(c)) {
				t.Errorf("%s: description lacks %s", f.Name, problem.Wire(c))
			}
		}
	}
	// The codes no route family answers, and why.
	outside := map[facade.Code]string{
		facade.ErrDuplicateStudent.Code: "a gradebook row's code",
		facade.ErrNotInClass.Code:       "a gradebook row's code",
		facade.ErrUnknownCurrency.Code:  "only account creation (facade seed) refuses it",
		facade.ErrRouteNotFound.Code:    "the answer of no route",
	}
	for _, c := range facade.Codes() {
		if !bytes.Contains(doc, []byte(`"`+problem.Wire(c)+`"`)) {
			t.Errorf("%s is not in api/openapi.json", problem.Wire(c))
		}
		if _, ok := outside[c]; !inFamily[c] && !ok {
			t.Errorf("%s is in no route family (server/problem/families.go)", problem.Wire(c))
		}
	}
}

// TestTheRestIsKeptByteForByte: reading and writing the document without
// a change gives it back unchanged, so the generator can only touch the
// code lists.
func TestTheRestIsKeptByteForByte(t *testing.T) {
	doc, err := os.ReadFile(document)
	if err != nil {
		t.Fatal(err)
	}
	v, err := parse(doc)
	if err != nil {
		t.Fatal(err)
	}
	out, err := format(v)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(doc, out) {
		t.Fatal("a round trip changes the document")
	}
}

const wordsModulePath = "../../web/static/js/words.js"

// TestThePagesWordsAreGenerated: a code's words changed or added in the
// table (server/problem) without `go generate ./web` leave the page's
// words stale, and the rest of the module is kept byte for byte.
func TestThePagesWordsAreGenerated(t *testing.T) {
	src, err := os.ReadFile(wordsModulePath)
	if err != nil {
		t.Fatal(err)
	}
	out, err := generateWords(src)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(src, out) {
		t.Fatalf("web/static/js/words.js is stale: run go generate ./web")
	}
	for _, w := range problem.PageWords() {
		if w.Say != "" && !bytes.Contains(src, []byte(jsString(w.Code)+": "+jsString(w.Say))) {
			t.Errorf("%s: its words are not in words.js", w.Code)
		}
	}
}

const gradesViewPath = "../../web/static/js/views/grades.js"

// TestThePagesScaleIsGenerated: a grade added to or removed from
// grades.Scale without `go generate ./web` leaves the page's grade menu
// stale, and the rest of the view is kept byte for byte.
func TestThePagesScaleIsGenerated(t *testing.T) {
	src, err := os.ReadFile(gradesViewPath)
	if err != nil {
		t.Fatal(err)
	}
	out, err := generateScale(src)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(src, out) {
		t.Fatalf("web/static/js/views/grades.js is stale: run go generate ./web")
	}
	if !bytes.Contains(src, []byte(scaleModule(grades.Scale()))) {
		t.Error("the view's SCALE is not grades.Scale")
	}
}
