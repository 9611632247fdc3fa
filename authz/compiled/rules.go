package compiled

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/casbin/casbin/v2/model"
)

// Problem is one finding in model.conf or policy.csv, written for the ops
// person who maintains them.
type Problem struct {
	File string
	Line int // 1-based; 0 when the problem concerns the whole file
	Msg  string
	// Warning marks findings that do not stop the files from loading
	// (a duplicate, a line that can never matter, a group cycle).
	// Everything else refuses the files.
	Warning bool
}

// String formats p as "file:line: msg" ("file: msg" without a line).
func (p Problem) String() string {
	msg := p.Msg
	if p.Warning {
		msg = "warning: " + msg
	}
	if p.Line <= 0 {
		return p.File + ": " + msg
	}
	return p.File + ":" + strconv.Itoa(p.Line) + ": " + msg
}

// HasErrors reports whether any problem is not a warning, i.e. whether the
// files would be refused (`facade policy check` exits 1 then).
func HasErrors(problems []Problem) bool {
	for _, p := range problems {
		if !p.Warning {
			return true
		}
	}
	return false
}

// Rule is one policy line as casbin loads it: ptype (p, g, g2...) and its
// fields, with where it was written (for explanations and findings).
type Rule struct {
	Type   string
	Fields []string
	Line   int
	Text   string
}

// Cite is "file:line: text", how tools quote a rule.
func (r Rule) Cite(file string) string {
	return fmt.Sprintf("%s:%d: %s", file, r.Line, r.Text)
}

// ParsePolicy reads policy.csv exactly as casbin's file adapter does (lines
// trimmed; blank and # lines skipped; each line split by encoding/csv with
// leading spaces trimmed; duplicates skipped, the first kept) and checks
// each rule against model m. It returns the rules casbin would load, in
// file order, and every problem.
func ParsePolicy(path string, data []byte, m model.Model) ([]Rule, []Problem) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // a UTF-8 BOM from some editors
	var (
		rules    []Rule
		problems []Problem
		firstAt  = map[string]int{}
	)
	for n, raw := 1, data; len(raw) > 0; n++ {
		var lineBytes []byte
		lineBytes, raw, _ = bytes.Cut(raw, []byte("\n"))
		if len(lineBytes) > maxLineBytes {
			problems = append(problems, Problem{File: path, Line: n, Msg: fmt.Sprintf(
				"the line is %d bytes long: casbin's file adapter reads lines of at most %d bytes and refuses the whole file", len(lineBytes), maxLineBytes)})
			continue
		}
		text := strings.TrimSpace(string(lineBytes))
		if text == "" || text[0] == '#' {
			continue
		}
		r, msg := parseRule(text, m)
		if msg != "" {
			problems = append(problems, Problem{File: path, Line: n, Msg: msg})
			continue
		}
		r.Line = n
		key := r.Type + "\x00" + strings.Join(r.Fields, "\x00")
		if first, dup := firstAt[key]; dup {
			problems = append(problems, Problem{File: path, Line: n, Warning: true,
				Msg: fmt.Sprintf("duplicate of line %d; casbin ignores it", first)})
			continue
		}
		firstAt[key] = n
		rules = append(rules, r)
	}
	return rules, problems
}

// maxLineBytes is the longest line casbin's file adapter reads: it scans
// lines with a bufio.Scanner, whose buffer (line and newline) holds at
// most bufio.MaxScanTokenSize bytes; a longer line, comments included,
// fails the whole load.
const maxLineBytes = bufio.MaxScanTokenSize - 1

// parseRule splits one line as casbin.persist.LoadPolicyLine does and checks
// its type and arity against the model.
func parseRule(text string, m model.Model) (Rule, string) {
	tokens, quoted, problem := SplitCSV(text)
	if problem != "" {
		return Rule{}, problem
	}
	for i := range tokens {
		switch {
		case strings.TrimSpace(tokens[i]) == "":
			return Rule{}, fmt.Sprintf("field %d is empty", i+1)
		case strings.TrimSpace(tokens[i]) != tokens[i] && !quoted[i]:
			// casbin keeps trailing spaces as part of the value: "bob " is
			// not bob. Inside quotes they are meant ("group:Domain Users ").
			return Rule{}, fmt.Sprintf("field %d has spaces after its value (casbin would keep them; quote the field if they are meant)", i+1)
		}
	}
	r := Rule{Type: tokens[0], Fields: tokens[1:], Text: text}
	sec := r.Type[:1]
	ast, ok := m[sec][r.Type]
	if !ok || (sec != "p" && sec != "g") {
		return r, fmt.Sprintf("unknown line type %q: the model defines %s", r.Type, definedTypes(m))
	}
	if len(r.Fields) != len(ast.Tokens) {
		return r, fmt.Sprintf("a %s line has %d fields after %q (%s); found %d",
			r.Type, len(ast.Tokens), r.Type, strings.TrimSpace(ast.Value), len(r.Fields))
	}
	return r, ""
}

// SplitCSV reads one line as casbin's file adapter does (encoding/csv,
// leading spaces trimmed) and says which fields were quoted. A line
// without quotes, nearly every line of a policy, is split directly: the
// same fields, without a CSV reader per line, which a reload of a large
// policy would feel (docs/performance.md).
func SplitCSV(text string) (tokens []string, quoted []bool, problem string) {
	if text != "" && text[0] != '#' && !strings.ContainsAny(text, "\"\r\n") {
		tokens = strings.Split(text, ",")
		for i, t := range tokens {
			tokens[i] = strings.TrimLeftFunc(t, unicode.IsSpace)
		}
		return tokens, make([]bool, len(tokens)), ""
	}
	rd := csv.NewReader(strings.NewReader(text))
	rd.Comma, rd.Comment, rd.TrimLeadingSpace = ',', '#', true
	tokens, err := rd.Read()
	if err != nil {
		return nil, nil, "not a CSV line: " + strings.TrimPrefix(err.Error(), "record on line 1: ")
	}
	quoted = make([]bool, len(tokens))
	for i := range tokens {
		// FieldPos is where the field starts, after the trimmed spaces: at
		// its opening quote when it has one.
		if _, col := rd.FieldPos(i); col >= 1 && col <= len(text) {
			quoted[i] = text[col-1] == '"'
		}
	}
	return tokens, quoted, ""
}

func definedTypes(m model.Model) string {
	var names []string
	for _, sec := range []string{"p", "g"} {
		for k := range m[sec] {
			names = append(names, k)
		}
	}
	return strings.Join(sortedStrings(names), ", ")
}

// NormalLine is the line's identity for usage: its type and fields as
// casbin reads them, written back with casbin's CSV quoting, so spacing
// and needless quotes do not change it.
func NormalLine(r Rule) string {
	var b strings.Builder
	b.WriteString(r.Type)
	for _, f := range r.Fields {
		b.WriteString(", ")
		b.WriteString(QuoteField(f))
	}
	return b.String()
}

// QuoteField writes one policy.csv field, quoted by casbin's CSV rules when
// it needs it (a comma, a quote or a line break, a space at either end).
func QuoteField(f string) string {
	if f != "" && !strings.ContainsAny(f, ",\"\r\n") && strings.TrimSpace(f) == f {
		return f
	}
	return `"` + strings.ReplaceAll(f, `"`, `""`) + `"`
}
