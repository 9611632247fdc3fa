package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// secretSettings may each be given as <NAME>_FILE instead: a path whose
// content is the value. Kubernetes Secrets and Docker secrets are mounted
// as files, and a value read from a file is not in the process's
// environment (ps e, crash dumps, kubectl describe).
// They are the settings marked secret in the table (config.go).
var secretSettings = secretNames()

func secretNames() []string {
	var names []string
	for _, st := range settingTable(&settings{}) {
		if st.secret {
			names = append(names, st.name)
		}
	}
	return names
}

// readSecretFiles returns a settings source that answers each secret
// setting from its _FILE when that is set, and one error per problem: the
// variable and its _FILE both set, or a file that cannot be read. An error
// names the variable and the path, never the content.
func readSecretFiles(getenv func(string) string) (func(string) string, []error) {
	fromFiles := map[string]string{}
	var bad []error
	for _, name := range secretSettings {
		path := getenv(name + "_FILE")
		if path == "" {
			continue
		}
		if getenv(name) != "" {
			bad = append(bad, fmt.Errorf("%s and %s_FILE are both set: set one", name, name))
			continue
		}
		b, err := os.ReadFile(path)
		if err != nil {
			bad = append(bad, fmt.Errorf("%s_FILE: cannot read %s (%s)", name, path, fileProblem(err)))
			continue
		}
		fromFiles[name] = strings.TrimRight(string(b), "\r\n")
	}
	if len(fromFiles) == 0 {
		return getenv, bad
	}
	return func(k string) string {
		if v, ok := fromFiles[k]; ok {
			return v
		}
		return getenv(k)
	}, bad
}

// fileProblem says why a file could not be read in a few words, without
// the path twice (os.ReadFile's error repeats it).
func fileProblem(err error) string {
	var pathErr *fs.PathError
	if errors.As(err, &pathErr) {
		err = pathErr.Err
	}
	return err.Error()
}
