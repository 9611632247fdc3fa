package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSecretsFromFiles: each secret setting can come from <NAME>_FILE,
// the way Kubernetes and Docker mount secrets; the trailing newline an
// editor or `echo` leaves is not part of the value.
func TestSecretsFromFiles(t *testing.T) {
	dir := t.TempDir()
	key := "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="
	cases := []struct {
		name, value string
		got         func(settings) string
	}{
		{"FACADE_JWT_SECRET", secret, func(s settings) string { return s.JWTSecret }},
		{"FACADE_UPSTREAM_TOKEN", "bamboo-pat-123", func(s settings) string { return s.UpstreamToken }},
		{"FACADE_OIDC_CLIENT_SECRET", "client-secret", func(s settings) string { return s.OIDCClientSecret }},
		{"FACADE_SESSION_KEYS", key, func(s settings) string {
			if len(s.SessionKeys) != 1 || string(s.SessionKeys[0]) != "0123456789abcdef0123456789abcdef" {
				return "wrong keys"
			}
			return key
		}},
		{"FACADE_REDIS_URL", "redis://:p%40ss@127.0.0.1:6379/2", func(s settings) string { return s.RedisURL }},
	}
	for _, c := range cases {
		file := filepath.Join(dir, c.name)
		if err := os.WriteFile(file, []byte(c.value+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := loadSettings(settingsFrom(map[string]string{c.name + "_FILE": file}))
		if err != nil {
			t.Errorf("%s_FILE: %v", c.name, err)
			continue
		}
		if got := c.got(s); got != c.value {
			t.Errorf("%s_FILE: value %q, want %q (trailing newline trimmed)", c.name, got, c.value)
		}
	}
}

// TestSecretFileMistakes: the variable and its file both set is a start-up
// error naming both (which one wins would be a guess); a file that cannot
// be read names the variable and the path. No error prints a secret.
func TestSecretFileMistakes(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "secret")
	const content = "the-secret-content-never-printed-0123456789"
	if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, name := range secretSettings {
		vars := map[string]string{name: content, name + "_FILE": file,
			"FACADE_MODEL": "../../model.conf", "FACADE_POLICY": "../../policy.csv"}
		code, _, stderr := runCmd(settingsFrom(vars), "serve")
		if code != 2 || !strings.Contains(stderr, name+" and "+name+"_FILE are both set") || strings.Contains(stderr, content) {
			t.Errorf("%s and %s_FILE both set: exit %d\n%s", name, name, code, stderr)
		}
		missing := filepath.Join(dir, "no-such-file")
		vars = map[string]string{name + "_FILE": missing}
		code, _, stderr = runCmd(settingsFrom(vars), "serve")
		if code != 2 || !strings.Contains(stderr, "facade serve: "+name+"_FILE: cannot read "+missing) {
			t.Errorf("%s_FILE missing: exit %d\n%s", name, code, stderr)
		}
	}
	// A directory in place of the file (a Secret mounted as a volume and
	// the path pointing at the volume, not its key) is unreadable too.
	code, _, stderr := runCmd(settingsFrom(map[string]string{"FACADE_JWT_SECRET_FILE": dir}), "token", "--sub", "a", "--role", "student")
	if code != 2 || !strings.Contains(stderr, "FACADE_JWT_SECRET_FILE: cannot read "+dir) {
		t.Errorf("FACADE_JWT_SECRET_FILE a directory: exit %d\n%s", code, stderr)
	}
}
