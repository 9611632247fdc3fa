//go:build !demo

package main

import (
	"strings"
	"testing"
)

// TestProductionDemoSaysHowToStartIt: `facade demo` in the production
// build starts nothing and says in one line how to start the demo, and
// that is the README's first command.
func TestProductionDemoSaysHowToStartIt(t *testing.T) {
	code, stdout, stderr := runCmd(settingsFrom(nil), "demo")
	if code != exitFailed || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, demoCommand) {
		t.Fatalf("facade demo in the production build: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if first := readmeLine(t, "go run ", " demo"); !strings.HasPrefix(first, demoCommand) {
		t.Fatalf("the README's demo command %q is not %q", first, demoCommand)
	}
}
