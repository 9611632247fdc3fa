package problem

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/facade-dev/facade"
)

// TestEveryDomainCodeHasItsOwnLine: a sentinel added to errors.go without
// a line here would reach clients as a 500; a line without its sentinel
// in errors.go is a code declared somewhere else.
func TestEveryDomainCodeHasItsOwnLine(t *testing.T) {
	declared := map[facade.Code]bool{}
	for _, code := range facade.Codes() {
		if declared[code] {
			t.Errorf("code %q declared twice in errors.go", code)
		}
		declared[code] = true
		kind, ok := problems[code]
		if !ok || kind.detail == "" || (kind.status == 500) != (code == facade.ErrInternal.Code) {
			t.Errorf("code %q: table line %+v, present %v", code, kind, ok)
		}
	}
	for code := range problems {
		if !declared[code] {
			t.Errorf("code %q has a table line but no sentinel in errors.go", code)
		}
	}
}

// TestCausesNeverReachTheBody: the sentence is the table's, whatever the
// cause, and an unknown error is a generic 500.
func TestCausesNeverReachTheBody(t *testing.T) {
	secret := errors.New("dial tcp 10.0.0.7:6379: connection refused")
	for _, err := range []error{facade.Wrap(facade.ErrStoreUnavailable, secret), secret} {
		h := http.Header{}
		status, b := Render(h, err, "rid")
		var p map[string]any
		if json.Unmarshal(b, &p) != nil || p["request_id"] != "rid" || h.Get("Content-Type") != "application/problem+json" {
			t.Fatalf("body %s headers %v", b, h)
		}
		if d := p["detail"].(string); d != problems[facade.CodeOf(err)].detail || status != problems[facade.CodeOf(err)].status {
			t.Errorf("%v: %d %q", err, status, d)
		}
	}
	if h := (http.Header{}); true {
		Render(h, facade.Wrap(facade.ErrStoreUnavailable, secret), "")
		if h.Get("Retry-After") != "1" {
			t.Errorf("store unavailable without the table's Retry-After: %v", h)
		}
	}
}

// TestTheWireShape: type is /problems/<code>, code is the internal name
// with "-", an input error lists its rules with their own sentences, a
// refused token says why in WWW-Authenticate without a character that
// would need escaping there, and no token at all gets the bare scheme.
func TestTheWireShape(t *testing.T) {
	h := http.Header{}
	_, b := Render(h, facade.Refuse(facade.ErrBadAmount, "amount", facade.ReasonTooPrecise), "rid")
	var p struct {
		Type, Code string
		Errors     []struct{ Parameter, Code, Detail string }
	}
	if json.Unmarshal(b, &p) != nil || p.Type != "/problems/bad-amount" || p.Code != "bad-amount" ||
		len(p.Errors) != 1 || p.Errors[0].Parameter != "amount" || p.Errors[0].Code != "too-precise" ||
		p.Errors[0].Detail != problems[facade.ErrBadAmount.Code].reasons[facade.ReasonTooPrecise] {
		t.Errorf("bad amount: %s", b)
	}
	for code, kind := range problems {
		if strings.ContainsAny(kind.detail, "\"\\\r\n") && kind.invalidToken {
			t.Errorf("%s: a sentence WWW-Authenticate cannot carry unescaped: %q", code, kind.detail)
		}
		if kind.advice == "" {
			t.Errorf("%s: no advice for its page", code)
		}
		for r, s := range kind.reasons {
			if s == "" || s == kind.detail {
				t.Errorf("%s %s: no sentence of its own", code, r)
			}
		}
		h := http.Header{}
		status, _ := Render(h, &facade.Error{Code: code}, "")
		challenge := h.Get("WWW-Authenticate")
		switch {
		case status != http.StatusUnauthorized && challenge != "":
			t.Errorf("%s: %d with WWW-Authenticate", code, status)
		case status == http.StatusUnauthorized && kind.invalidToken &&
			challenge != `Bearer error="invalid_token", error_description="`+kind.detail+`"`:
			t.Errorf("%s: challenge %q", code, challenge)
		case status == http.StatusUnauthorized && !kind.invalidToken && challenge != "Bearer":
			t.Errorf("%s: challenge %q", code, challenge)
		}
		if page, ok := Page(Wire(code)); !ok || !strings.Contains(string(page), "<h1>"+Wire(code)+"</h1>") {
			t.Errorf("%s: no page", code)
		}
	}
	if h := (http.Header{}); true {
		Render(h, facade.ErrTokenMissing, "")
		if h.Get("WWW-Authenticate") != "Bearer" {
			t.Errorf("no token: %q", h.Get("WWW-Authenticate"))
		}
	}
}

// TestEveryCodeHasWordsForThePage: the browser page tells a person what to
// do next for every code, from the code's own entry: its words, or, for
// the codes a gradebook row alone is refused with, its row words; finer
// words are for rules the code reports.
func TestEveryCodeHasWordsForThePage(t *testing.T) {
	for _, code := range facade.Codes() {
		kind := problems[code]
		if kind.words == "" && kind.rowWords == "" {
			t.Errorf("%s: no words for the page", code)
		}
		for r := range kind.reasonWords {
			if _, ok := kind.reasons[r]; !ok {
				t.Errorf("%s: words for %s, a rule it does not report", code, r)
			}
		}
	}
}
