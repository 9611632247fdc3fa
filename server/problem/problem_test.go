package problem

import (
	"encoding/json"
	"errors"
	"net/http"
	"testing"

	"github.com/facade-dev/facade"
)

// TestEveryDomainCodeHasItsOwnLine: a sentinel added to errors.go without
// a line here would reach clients as a 500.
func TestEveryDomainCodeHasItsOwnLine(t *testing.T) {
	for _, code := range facade.Codes() {
		kind, ok := problems[code]
		if !ok || kind.detail == "" || (kind.status == 500) != (code == facade.ErrInternal.Code) {
			t.Errorf("code %q: table line %+v, present %v", code, kind, ok)
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
