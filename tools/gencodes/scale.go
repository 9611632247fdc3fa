package main

import (
	"strings"

	"github.com/facade-dev/facade/grades"
)

// The markers in web/static/js/views/grades.js between which the page's
// copy of the grade scale (its grade menu) is written.
const (
	scaleStart = "// Written by `go generate ./web` from grades.Scale (grades/grade.go), the\n" +
		"// one list of the grades. Do not edit down to the end marker.\n"
	scaleEnd = "// End of the written scale.\n"
)

// generateScale returns the grades view src with its scale written from
// grades.Scale.
func generateScale(src []byte) ([]byte, error) {
	return writeMarked(src, scaleStart, scaleEnd, scaleModule(grades.Scale()))
}

// scaleModule is the written part: the scale, best first.
func scaleModule(scale []string) string {
	quoted := make([]string, len(scale))
	for i, g := range scale {
		quoted[i] = jsString(g)
	}
	return "const SCALE = [" + strings.Join(quoted, ", ") + "];\n"
}
