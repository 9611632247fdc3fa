package main

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/facade-dev/facade/internal/testkit/testlog"
	"github.com/facade-dev/facade/internal/testkit/testredis"
)

// firstDay is README.md's "Running it for real" as a person runs it: the
// settings of its export lines (evaluated by bash, as pasted), the address
// it says to open the page at, its seed and token commands.
type firstDay struct {
	env        map[string]string
	page       string
	seed       []string
	tokenUsage []string
}

func readFirstDay(t *testing.T) firstDay {
	t.Helper()
	_, section, ok := strings.Cut(mustRead(t, "../../README.md"), "\n## Running it for real\n")
	if !ok {
		t.Fatal("README.md has no section Running it for real")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	_, block, _ := strings.Cut(section, "```sh\n")
	block, _, _ = strings.Cut(block, "```")
	var fd firstDay
	var exports []string
	for _, line := range strings.Split(block, "\n") {
		cmd, _, _ := strings.Cut(line, "#")
		switch f := strings.Fields(cmd); {
		case strings.HasPrefix(line, "export "):
			exports = append(exports, line)
		case len(f) > 1 && f[0] == "./facade" && f[1] == "seed":
			fd.seed = f[1:]
		case len(f) > 1 && f[0] == "./facade" && f[1] == "token":
			fd.tokenUsage = f[1:]
		}
	}
	fd.page = regexp.MustCompile(`https?://[^\s]+/ui/`).FindString(section)
	if len(exports) == 0 || fd.page == "" || fd.seed == nil || fd.tokenUsage == nil {
		t.Fatalf("README's steps lack exports %v, a page address %q, a seed %v or a token command %v", exports, fd.page, fd.seed, fd.tokenUsage)
	}
	out, err := exec.Command("env", "-i", "PATH=/usr/bin:/bin", "bash", "-ec", strings.Join(exports, "\n")+"\nenv").Output()
	if err != nil {
		t.Fatalf("the README's exports: %v", err)
	}
	fd.env = map[string]string{}
	for _, kv := range strings.Split(string(out), "\n") {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, "FACADE_") {
			fd.env[k] = v
		}
	}
	return fd
}

// TestREADMEFirstDayPageCanSave follows README.md's "Running it for real"
// as written (its settings; the machine's port 8080, the person's Redis and
// the working directory are the test's): the page, opened where the README
// says, may save a grade. Without FACADE_PUBLIC_URL, as the README had it,
// the same write is refused 403 origin-refused, the page's "may not make
// changes from where it was opened", and serve said so at start-up in one
// warning naming the settings.
func TestREADMEFirstDayPageCanSave(t *testing.T) {
	fd := readFirstDay(t)
	page, err := url.Parse(fd.page)
	if err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	env := map[string]string{}
	for k, v := range fd.env {
		env[k] = strings.ReplaceAll(v, page.Host, addr)
	}
	origin := page.Scheme + "://" + addr
	env["FACADE_ADDR"], env["FACADE_REDIS_URL"] = addr, testredis.URL(t)
	env["FACADE_MODEL"], env["FACADE_POLICY"], env["FACADE_DRAIN_DELAY"] = "../../model.conf", "../../policy.csv", "0"
	seed := append([]string(nil), fd.seed...)
	for i, a := range seed {
		if i > 0 && seed[i-1] == "--file" {
			seed[i] = "../../" + a
		}
	}
	if code, _, stderr := runCmd(settingsFrom(env), seed...); code != 0 {
		t.Fatalf("%v: %s", fd.seed, stderr)
	}
	code, out, stderr := runCmd(settingsFrom(env), fd.tokenUsage...)
	if code != 0 {
		t.Fatalf("%v: %s", fd.tokenUsage, stderr)
	}
	token := strings.TrimSpace(out)
	save := func() (int, string) { // the page's save of a grade (web/static/js/api.js), with the Origin a browser sends
		r, _ := http.NewRequest(http.MethodPut, "http://"+addr+"/student/alice/english/grade", strings.NewReader(`{"grade": "A-"}`))
		r.Header.Set("Authorization", "Bearer "+token)
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Origin", origin)
		r.Header.Set("Sec-Fetch-Site", "same-origin")
		r.Header.Set("X-XSRF-TOKEN", "0123456789abcdef0123456789abcdef") // the page's own value in token mode
		res, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var body struct{ Code string }
		_ = json.NewDecoder(res.Body).Decode(&body)
		return res.StatusCode, body.Code
	}
	const warning = "the page cannot change anything"

	var logs testlog.Buffer
	stop := startServe(t, settingsFrom(env), "http://"+addr, &logs)
	if status, code := save(); status != http.StatusOK {
		t.Errorf("the page's save with the README's settings: %d %s, want 200", status, code)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(logs.String(), warning) {
		t.Errorf("serve warned that the page cannot write, and it can:\n%s", logs.String())
	}

	delete(env, "FACADE_PUBLIC_URL")
	var before testlog.Buffer
	startServe(t, settingsFrom(env), "http://"+addr, &before)
	if status, code := save(); status != http.StatusForbidden || code != "origin-refused" {
		t.Errorf("the page's save without FACADE_PUBLIC_URL: %d %s, want 403 origin-refused", status, code)
	}
	if n := strings.Count(before.String(), warning); n != 1 || !strings.Contains(before.String(), "FACADE_PUBLIC_URL") ||
		!strings.Contains(before.String(), "FACADE_CORS_WRITE_ORIGINS") {
		t.Errorf("%d start-up warnings that the page cannot write, want one naming FACADE_PUBLIC_URL and FACADE_CORS_WRITE_ORIGINS:\n%s", n, before.String())
	}
}
