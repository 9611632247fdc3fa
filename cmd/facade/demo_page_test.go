package main

import (
	"context"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/facade-dev/facade/internal/testbrowser"
)

// TestDemoPageInTheBrowser: `facade demo` as a newcomer runs it, its page
// in Chromium with the tokens it prints: a developer downloads an
// artifact, a professor lists their class and changes a grade, an account
// holder sees a balance.
func TestDemoPageInTheBrowser(t *testing.T) {
	env := settingsFrom(map[string]string{"FACADE_ADDR": freeAddr(t), "FACADE_LOG_LEVEL": "error"})
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- cmdDemo(ctx, nil, env, pw, io.Discard); pw.Close() }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("demo did not stop")
		}
	})
	out := readUntil(t, pr, "Ctrl-C to stop")
	go io.Copy(io.Discard, pr)
	base := regexp.MustCompile(`API:\s+(\S+)`).FindStringSubmatch(out)[1]
	tokens := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^\s*export ([A-Z]+)=(eyJ\S+)$`).FindAllStringSubmatch(out, -1) {
		tokens[m[1]] = m[2]
	}
	if len(tokens) != 4 {
		t.Fatalf("demo printed %d tokens:\n%s", len(tokens), out)
	}
	b := testbrowser.New(t)

	b.OpenPage(base, tokens["DEVELOPER"])
	b.Do(chromedp.Click(chromedp.ID("projects-load")),
		chromedp.Click(chromedp.CSS(`button[data-plan="PROJ-CORE"]`)))
	b.WaitText("#results-h", "newest first")
	file := b.Download(t.TempDir(),
		chromedp.Click(chromedp.CSS(`button[data-result="PROJ-CORE-6"]`)),
		chromedp.Click(chromedp.CSS(`button[data-artifact="core-service.jar"]`)))
	if got, err := os.ReadFile(file); err != nil || !strings.HasPrefix(string(got), "PK") {
		t.Fatalf("downloaded artifact: %d bytes, %v", len(got), err)
	}

	b.OpenPage(base, tokens["PROFESSOR"])
	b.Do(chromedp.WaitReady(chromedp.CSS(`#class-select option[value="english-101"]`)),
		chromedp.Click(chromedp.ID("class-show")),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-student="alice"]`)))
	b.WaitText(`tr[data-student="alice"] .grade`, "B+")
	b.Do(chromedp.SetValue(chromedp.ID("grade-alice"), "A"),
		chromedp.Click(chromedp.CSS(`button[data-save="alice"]`)))
	b.WaitText("#status", "alice now has A (version 2)")

	b.OpenPage(base, tokens["HOLDER"])
	b.Do(chromedp.SendKeys(chromedp.ID("account-ids"), "1001"),
		chromedp.Click(chromedp.ID("account-show")))
	b.WaitText(`[data-account="1001"] .balance`, "250.00 EUR")
}
