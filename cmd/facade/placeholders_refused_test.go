package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// serveEnv is what serve needs to get past its settings check without
// contacting anything, plus vars.
func serveEnv(vars map[string]string) map[string]string {
	env := map[string]string{"FACADE_REDIS_URL": "redis://127.0.0.1:1/0", "FACADE_JWT_SECRET": secret,
		"FACADE_MODEL": "../../model.conf", "FACADE_POLICY": "../../policy.csv"}
	for k, v := range vars {
		env[k] = v
	}
	return env
}

// refusedOnce runs serve with env and wants exit 2 and exactly one line,
// naming name and saying want, that does not print value.
func refusedOnce(t *testing.T, env map[string]string, name, want, value string) {
	t.Helper()
	code, _, stderr := runCmd(settingsFrom(env), "serve")
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if code != 2 || len(lines) != 1 || !strings.HasPrefix(lines[0], "facade serve: "+name+" ") ||
		!strings.Contains(lines[0], want) || strings.Contains(stderr, value) {
		t.Errorf("%s=%.12s...: exit %d; want exit 2 and one line naming %s, saying %q, not printing the value:\n%s",
			name, value, code, name, want, stderr)
	}
}

// shippedPlaceholders are the REPLACE… values of the repository's own
// files (what anyone holding it knows), found the way a person would
// find them: grep.
var shippedPlaceholder = regexp.MustCompile(`REPLACE[A-Za-z0-9+/=_.-]*`)

func shippedFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, pattern := range []string{"../../README.md", "../../compose.yaml", "../../docs/*.md", "../../deploy/*/*.yaml", "../../deploy/*/*/*.yaml"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	return files
}

// TestShippedPlaceholdersAreRefused: every REPLACE… value of the
// repository's files (the example Secret, the docs), given as any secret
// setting or its _FILE, stops serve with one line naming the variable; the
// example Secret's Redis URL too. None of them is printed.
func TestShippedPlaceholdersAreRefused(t *testing.T) {
	var found []string
	var redisURLs []string
	for _, f := range shippedFiles(t) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range shippedPlaceholder.FindAllString(string(b), -1) {
			if !slices.Contains(found, v) {
				found = append(found, v)
			}
		}
		for _, u := range regexp.MustCompile(`rediss?://[^\s"]*REPLACE[^\s"]*`).FindAllString(string(b), -1) {
			redisURLs = append(redisURLs, u)
		}
	}
	if len(found) < 3 || len(redisURLs) == 0 {
		t.Fatalf("found %v and %v: the example Secret's placeholders are gone from where this test looks", found, redisURLs)
	}
	dir := t.TempDir()
	for _, v := range found {
		for _, name := range []string{"FACADE_JWT_SECRET", "FACADE_SESSION_KEYS", "FACADE_OIDC_CLIENT_SECRET", "FACADE_UPSTREAM_TOKEN"} {
			refusedOnce(t, serveEnv(map[string]string{name: v}), name, "placeholder", v)
			file := filepath.Join(dir, name)
			if err := os.WriteFile(file, []byte(v+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			env := serveEnv(map[string]string{name + "_FILE": file})
			delete(env, name)
			refusedOnce(t, env, name+"_FILE", "placeholder", v)
		}
	}
	for _, u := range redisURLs {
		refusedOnce(t, serveEnv(map[string]string{"FACADE_REDIS_URL": u}), "FACADE_REDIS_URL:", "placeholder", "REPLACE")
	}
}

// TestWeakSecretsAreRefused: a secret of one repeated character, of fewer
// than 8 different ones, or a short pattern repeated stops serve, naming
// the variable (and which key of a list); so do spaces around a key of a
// list. Generated values of every documented kind start.
func TestWeakSecretsAreRefused(t *testing.T) {
	for _, c := range []struct{ name, value, want string }{
		{"FACADE_JWT_SECRET", strings.Repeat("a", 48), "too weak"},
		{"FACADE_JWT_SECRET", strings.Repeat("s3cr3t!", 6), "too weak"},
		{"FACADE_JWT_SECRET", secret + "," + strings.Repeat("0123456789", 4), "key 2 of 2 is too weak"},
		{"FACADE_JWT_SECRET", secret + ", " + secret, "key 2 of 2 begins or ends with a space"},
		{"FACADE_SESSION_KEYS", "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=", "entry 1 is too weak"},
		{"FACADE_UPSTREAM_TOKEN", "...", "too weak"},
		{"FACADE_UPSTREAM_TOKEN", "changeme", "too weak"},
		{"FACADE_OIDC_CLIENT_SECRET", "hunter2", "too weak"},
		{"FACADE_OIDC_CLIENT_SECRET", "<optional>", "placeholder"},
	} {
		refusedOnce(t, serveEnv(map[string]string{c.name: c.value}), c.name, c.want, c.value)
	}
	// Generated values (openssl rand -base64 48 / -base64 32 / -hex 16, a
	// Bamboo personal access token's shape) pass.
	s, err := loadSettings(settingsFrom(serveEnv(map[string]string{
		"FACADE_JWT_SECRET":         "k8Z1q9yS0mQ4oV2r6cXgW3nE5tB7uJ+hL1pD9aF0sK2zR4vY6wC8xN3eT5iO7gH1," + secret,
		"FACADE_SESSION_KEYS":       testSessionKey,
		"FACADE_UPSTREAM_TOKEN":     "3f2a9c4e1b7d8f60a5c3e2d1b0f9e8a7",
		"FACADE_OIDC_CLIENT_SECRET": "NjA0MjE3ODM5NzQ2OkLp0n2vXw8QyZ3rT5uV7sA9bC1d",
	})))
	if err != nil {
		t.Fatal(err)
	}
	if bad := s.checkSecrets(); len(bad) != 0 {
		t.Errorf("generated secrets refused: %v", bad)
	}
}

// TestTokenRefusesTheKeysServeRefuses: `facade token` signs with
// FACADE_JWT_SECRET's first key; a placeholder or a weak key (of 32 bytes
// or more, so the length check passes) is refused naming the variable,
// never printing the key, and no token is printed: a token signed with
// such a key is one anyone can mint. It used to sign with it.
func TestTokenRefusesTheKeysServeRefuses(t *testing.T) {
	for _, key := range []string{
		"REPLACE-with-openssl-rand-base64-48-output", // the shape of the example Secret's
		strings.Repeat("ab", 20),
		secret + "," + strings.Repeat("x", 40), // a weak second key: serve refuses it too
	} {
		code, out, stderr := runCmd(settingsFrom(map[string]string{"FACADE_JWT_SECRET": key}), "token", "--sub", "alice")
		if code == 0 || out != "" || !strings.Contains(stderr, "FACADE_JWT_SECRET") || strings.Contains(stderr, key) {
			t.Errorf("token with FACADE_JWT_SECRET=%.12s...: exit %d, stdout %q, stderr %q; want a refusal naming the variable", key, code, out, stderr)
		}
	}
	if code, out, _ := runCmd(settingsFrom(map[string]string{"FACADE_JWT_SECRET": secret}), "token", "--sub", "alice"); code != 0 || strings.Count(out, ".") != 2 {
		t.Fatalf("token with a good key: exit %d %q", code, out)
	}
}
