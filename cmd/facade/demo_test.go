//go:build demo

package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestDemoListsBadSettings: demo fills in Redis, the secret and the files
// itself; what the person set wrongly is still listed, all at once, before
// anything starts.
func TestDemoListsBadSettings(t *testing.T) {
	env := settingsFrom(map[string]string{"FACADE_LOG_LEVEL": "loud", "FACADE_CACHE_TTL": "-1s"})
	code, _, stderr := runCmd(env, "demo")
	if code != 2 || !strings.Contains(stderr, "FACADE_LOG_LEVEL") || !strings.Contains(stderr, "FACADE_CACHE_TTL") {
		t.Errorf("demo with bad settings: exit %d\n%s", code, stderr)
	}
}

// TestDemoServes starts `facade demo` and uses the tokens it prints.
func TestDemoServes(t *testing.T) {
	d := startDemo(t)
	out, base := d.banner, d.base
	student, professor, holder, developer := d.tokens["STUDENT"], d.tokens["PROFESSOR"], d.tokens["HOLDER"], d.tokens["DEVELOPER"]
	get := func(tok, path string) (int, string) {
		r, _ := http.NewRequest("GET", base+path, nil)
		r.Header.Set("Authorization", "Bearer "+tok)
		res, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	checks := []struct {
		tok, path string
		want      int
		contains  string
	}{
		{student, "/student/alice/english/grade", 200, `"grade":"B+"`},
		{student, "/student/dave/english/grade", 403, ""},
		{professor, "/student/alice/english/grade", 200, `"grade"`},
		{professor, "/student/dave/english/grade", 403, ""},
		{holder, "/rs/account/1001/balance", 200, `"balance":250.00`},
		{holder, "/rs/account", 200, `"account_id":"3003"`},
		{holder, "/rs/account/2002/balance", 403, ""},
		{developer, "/rest/api/latest/project?expand=projects.project.plans", 200, `"PROJ"`},
		{developer, "/rs/account/1001/balance", 403, ""},
	}
	for _, c := range checks {
		if code, body := get(c.tok, c.path); code != c.want || !strings.Contains(body, c.contains) {
			t.Errorf("GET %s: %d %s", c.path, code, body)
		}
	}
	if !strings.Contains(out, "page:    "+base+"/ui/") {
		t.Errorf("the banner does not give the page's address:\n%s", out)
	}
	runPrintedCurls(t, out)
	if err := d.stop(); err != nil {
		t.Fatalf("demo on cancel: %v", err)
	}
}

// runningDemo is a `facade demo` started by a test: the banner it printed,
// its base URL and its tokens by name (STUDENT, PROFESSOR, HOLDER,
// DEVELOPER).
type runningDemo struct {
	banner, base string
	tokens       map[string]string
	stop         func() error // cancels it and waits; nil when it ended cleanly
}

// startDemo runs `facade demo` on a free port until the test ends.
func startDemo(t *testing.T) *runningDemo {
	t.Helper()
	env := settingsFrom(map[string]string{"FACADE_ADDR": freeAddr(t), "FACADE_LOG_LEVEL": "error"})
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- cmdDemo(ctx, nil, env, pw, io.Discard); pw.Close() }()
	stop := sync.OnceValue(func() error {
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(30 * time.Second):
			return errors.New("demo did not stop on cancel")
		}
	})
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
	})
	out := readUntil(t, pr, "Ctrl-C to stop")
	go io.Copy(io.Discard, pr)
	d := &runningDemo{banner: out, base: regexp.MustCompile(`API:\s+(\S+)`).FindStringSubmatch(out)[1],
		tokens: map[string]string{}, stop: stop}
	for _, m := range regexp.MustCompile(`(?m)^\s*export ([A-Z]+)=(eyJ\S+)$`).FindAllStringSubmatch(out, -1) {
		d.tokens[m[1]] = m[2]
	}
	if len(d.tokens) != 4 {
		t.Fatalf("demo printed %d tokens:\n%s", len(d.tokens), out)
	}
	return d
}

// runPrintedCurls runs the curl lines of the demo's banner as a newcomer
// pastes them (after the export lines), through sh and the real curl, and
// wants a 2xx from each.
func runPrintedCurls(t *testing.T, banner string) {
	t.Helper()
	curl, err := exec.LookPath("curl")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("curl is not installed (bash .ci/run installs it)")
		}
		t.Skip("curl is not installed; this check runs under bash .ci/run")
	}
	exports := regexp.MustCompile(`(?m)^\s*export [A-Z]+=\S+$`).FindAllString(banner, -1)
	joined := strings.ReplaceAll(banner, "\\\n", " ") // continuation lines
	curls := regexp.MustCompile(`(?m)^\s*curl .*$`).FindAllString(joined, -1)
	if len(curls) < 3 {
		t.Fatalf("the banner has %d curl lines:\n%s", len(curls), banner)
	}
	for _, line := range curls {
		script := strings.Join(exports, "\n") + "\n" + strings.TrimSpace(line) + ` -sS -o /dev/null -w '%{http_code}'`
		out, err := exec.Command("sh", "-c", script).CombinedOutput()
		if err != nil || len(out) != 3 || out[0] != '2' {
			t.Errorf("printed command failed (%s: %v): %s\n%s", curl, err, out, line)
		}
	}
}

func readUntil(t *testing.T, r io.Reader, marker string) string {
	t.Helper()
	var buf bytes.Buffer
	b := make([]byte, 4096)
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(buf.String(), marker) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in output:\n%s", marker, buf.String())
		}
		n, err := r.Read(b)
		buf.Write(b[:n])
		if err != nil {
			t.Fatalf("output ended: %v\n%s", err, buf.String())
		}
	}
	return buf.String()
}

// TestDemoUpstreamRunsAlone: compose.yaml runs the demo's upstream as its
// own process; it answers Bamboo's API to the token the service sends
// (from a file, as compose mounts it) and to no one else.
func TestDemoUpstreamRunsAlone(t *testing.T) {
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte("svc-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- cmdDemoUpstream(ctx, &cmdEnv{args: []string{"--addr", addr}, stdout: io.Discard, stderr: io.Discard,
			getenv: settingsFrom(map[string]string{"FACADE_UPSTREAM_TOKEN_FILE": file})})
	}()
	get := func(token string) (int, string) {
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			r, _ := http.NewRequest("GET", "http://"+addr+"/rest/api/latest/project?expand=projects.project.plans", nil)
			r.Header.Set("Accept", "application/json")
			if token != "" {
				r.Header.Set("Authorization", "Bearer "+token)
			}
			res, err := http.DefaultClient.Do(r)
			if err != nil {
				if time.Now().After(deadline) {
					t.Fatalf("demo-upstream does not answer: %v", err)
				}
				continue
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			return res.StatusCode, string(b)
		}
	}
	if code, body := get("svc-token"); code != 200 || !strings.Contains(body, `"PROJ"`) || !strings.Contains(body, "http://"+addr+"/") {
		t.Errorf("with the service's token: %d %s", code, body)
	}
	if code, _ := get("someone-else"); code != 401 {
		t.Errorf("with another token: %d, want 401", code)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("demo-upstream on stop: %v", err)
	}
}
