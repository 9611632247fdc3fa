package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPolicyDocExamplesShowTheRealOutput: every `$ facade policy ...`
// example in docs/policy.md that shows output is run on the repository's
// model.conf and policy.csv (and the document's own `policy test` file),
// and prints exactly what the document shows; an example that ends in
// "..." shows some of the lines, in order. A change to the files or the
// tools that makes the document wrong turns this red.
func TestPolicyDocExamplesShowTheRealOutput(t *testing.T) {
	doc := mustRead(t, "../../docs/policy.md")
	dir := t.TempDir()
	for _, f := range []string{"model.conf", "policy.csv"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(mustRead(t, "../../"+f)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	testFile, ok := blockAfter(doc, "A `policy test` file is one expected decision per line")
	if !ok {
		t.Fatal("docs/policy.md has no policy test file example")
	}
	if err := os.WriteFile(filepath.Join(dir, "policy.test"), []byte(testFile), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	env := settingsFrom(map[string]string{"FACADE_MODEL": "model.conf", "FACADE_POLICY": "policy.csv"})
	checked := 0
	for _, ex := range shellExamples(doc) {
		if len(ex.args) < 2 || ex.args[0] != "policy" || len(ex.want) == 0 {
			continue
		}
		_, out, stderr := runCmd(env, ex.args...)
		got := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if ex.want[len(ex.want)-1] == "..." {
			if missing := notInOrder(ex.want[:len(ex.want)-1], got); missing != "" {
				t.Errorf("docs/policy.md: `facade %s` shows\n  %s\nwhich it does not print (in this order); it prints\n%s%s",
					strings.Join(ex.args, " "), missing, out, stderr)
			}
		} else if strings.Join(got, "\n") != strings.Join(ex.want, "\n") {
			t.Errorf("docs/policy.md: `facade %s` shows\n%s\nit prints\n%s%s", strings.Join(ex.args, " "), strings.Join(ex.want, "\n"), out, stderr)
		}
		checked++
	}
	if checked < 4 {
		t.Fatalf("only %d examples of docs/policy.md checked", checked)
	}
}

// example is one "$ facade ..." line of a Markdown code block with the
// output lines under it.
type example struct {
	args []string
	want []string
}

// shellExamples reads every "$ facade ARGS   # comment" line in a document's
// code blocks and the lines under it up to the next "$ " line or the end
// of the block.
func shellExamples(doc string) []example {
	var out []example
	var cur *example
	inBlock := false
	for _, line := range strings.Split(doc, "\n") {
		switch {
		case strings.HasPrefix(line, "```"):
			inBlock, cur = !inBlock, nil
		case !inBlock:
		case strings.HasPrefix(line, "$ "):
			cmd, _, _ := strings.Cut(line[2:], "  #")
			f := strings.Fields(cmd)
			cur = nil
			if len(f) > 0 && f[0] == "facade" {
				out = append(out, example{args: f[1:]})
				cur = &out[len(out)-1]
			}
		case cur != nil:
			cur.want = append(cur.want, line)
		}
	}
	return out
}

// blockAfter returns the first code block after the paragraph starting
// with intro.
func blockAfter(doc, intro string) (string, bool) {
	_, rest, ok := strings.Cut(doc, intro)
	if !ok {
		return "", false
	}
	_, rest, ok = strings.Cut(rest, "```\n")
	if !ok {
		return "", false
	}
	block, _, ok := strings.Cut(rest, "```")
	return block, ok
}

// notInOrder returns the first of want not found in got after the ones
// before it, or "".
func notInOrder(want, got []string) string {
	i := 0
	for _, w := range want {
		for i < len(got) && got[i] != w {
			i++
		}
		if i == len(got) {
			return w
		}
		i++
	}
	return ""
}
