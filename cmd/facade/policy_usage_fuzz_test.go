package main

import (
	"testing"

	"github.com/facade-dev/facade/authz/grantusage"
)

// FuzzParseWindow: whatever --since says, the window is refused or lies
// within what Redis keeps (1 s to 400 days): no overflow turns a huge
// number of days into a small or negative window.
func FuzzParseWindow(f *testing.F) {
	for _, s := range []string{"90d", "400d", "401d", "36h", "0d", "-1d", "9223372036854775807d", "1e9h", "d", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		d, err := parseWindow(v)
		if err == nil && (d <= 0 || d > grantusage.MaxWindow) {
			t.Fatalf("--since %q gave a window of %v", v, d)
		}
	})
}
