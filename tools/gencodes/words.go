package main

import (
	"strings"

	"github.com/facade-dev/facade/server/problem"
)

// The markers in web/static/js/words.js between which the words are
// written; the rest of the module (how an error is explained) is written
// by hand.
const (
	wordsStart = "// Written by `go generate ./web` from server/problem's table (table.go), where each\n" +
		"// code's words live beside its status and sentences. Do not edit down to the end marker.\n"
	wordsEnd = "// End of the written words.\n"
)

// generateWords returns the words module src with the part between its
// markers written from the table.
func generateWords(src []byte) ([]byte, error) {
	return writeMarked(src, wordsStart, wordsEnd, wordsModule(problem.PageWords()))
}

// wordsModule is the written part: the words of each code, the finer
// words of some rules by code, and the words of a gradebook row by its
// code.
func wordsModule(all []problem.Words) string {
	var b strings.Builder
	b.WriteString("const words = {\n")
	for _, w := range all {
		if w.Say != "" {
			b.WriteString("  " + jsString(w.Code) + ": " + jsString(w.Say) + ",\n")
		}
	}
	b.WriteString("};\n\n// Finer words for an input's rule (errors[].code), by the problem's code.\nconst ruleWords = {\n")
	for _, w := range all {
		if len(w.Rules) == 0 {
			continue
		}
		b.WriteString("  " + jsString(w.Code) + ": {\n")
		for _, r := range w.RuleNames() {
			b.WriteString("    " + jsString(r) + ": " + jsString(w.Rules[r]) + ",\n")
		}
		b.WriteString("  },\n")
	}
	b.WriteString("};\n\n/** rowWords explains a gradebook row's code. */\nexport function rowWords(code) {\n  return {\n")
	for _, w := range all {
		if w.Row != "" {
			b.WriteString("    " + jsString(w.Code) + ": " + jsString(w.Row) + ",\n")
		}
	}
	b.WriteString("  }[code] || '';\n}\n")
	return b.String()
}

// jsString is s as a single-quoted JavaScript string.
func jsString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\n", `\n`).Replace(s) + "'"
}
