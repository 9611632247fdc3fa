// Command gencodes writes the facts that have one source in Go into the
// files that repeat them: the error codes from the one table of them
// (server/problem, whose codes errors.go declares) and the grade scale
// (grades.Scale). It writes the OpenAPI document (api/openapi.json: the
// ProblemCode enum, the ProblemItem rule enum, each route family's code
// enum and description, components.responses.Problem<Family>, and the
// GradeValue enum), and, between their markers (marked.go), the browser
// page's words (web/static/js/words.js: words.go) and its grade menu
// (web/static/js/views/grades.js: scale.go). The rest of each file is
// written by hand and left as it is, byte for byte.
//
// Run by `go generate ./api` (api/api.go) and `go generate ./web`
// (web/web.go); its tests fail when a checked-in file is not what it
// would write.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/facade-dev/facade/grades"
	"github.com/facade-dev/facade/server/problem"
)

func main() {
	paths := os.Args[1:]
	if len(paths) == 0 {
		paths = []string{"openapi.json"} // go generate runs in api/
	}
	for _, path := range paths {
		if err := rewrite(path); err != nil {
			fmt.Fprintln(os.Stderr, "gencodes:", err)
			os.Exit(1)
		}
	}
}

// writers are the files gencodes writes, by name, each with its writer.
var writers = map[string]func([]byte) ([]byte, error){
	"openapi.json": generate,
	"words.js":     generateWords,
	"grades.js":    generateScale,
}

// rewrite writes the file at path with its writer.
func rewrite(path string) error {
	write, ok := writers[filepath.Base(path)]
	if !ok {
		return fmt.Errorf("%s: not a file gencodes writes (openapi.json, words.js, grades.js)", path)
	}
	in, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	out, err := write(in)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if bytes.Equal(in, out) {
		return nil
	}
	return os.WriteFile(path, out, 0o644)
}

// generate returns doc with its code lists written from the table and its
// grade enum from the scale.
func generate(doc []byte) ([]byte, error) {
	root, err := parse(doc)
	if err != nil {
		return nil, err
	}
	top, ok := root.(*object)
	if !ok {
		return nil, errors.New("not a JSON object")
	}
	schemas, err := top.path("components", "schemas")
	if err != nil {
		return nil, err
	}
	codes, err := schemas.path("ProblemCode")
	if err != nil {
		return nil, err
	}
	codes.set("enum", strings2any(wireCodes()))
	code, err := schemas.path("ProblemItem", "properties", "code")
	if err != nil {
		return nil, err
	}
	code.set("enum", strings2any(wireRules()))
	grade, err := schemas.path("GradeValue")
	if err != nil {
		return nil, err
	}
	grade.set("enum", strings2any(grades.Scale()))
	responses, err := top.path("components", "responses")
	if err != nil {
		return nil, err
	}
	if err := writeFamilies(responses); err != nil {
		return nil, err
	}
	return format(root)
}

// writeFamilies writes each family's response: its description and the
// enum its schema adds to the Problem schema. A family new to the document
// gets a response shaped like the first one's; a Problem<Name> response
// of no family is an error (a family removed from the table but still
// used by the document).
func writeFamilies(responses *object) error {
	fams := problem.Families()
	var template *object
	for _, f := range fams {
		name := "Problem" + f.Name
		r, ok := responses.get(name).(*object)
		if !ok {
			if template == nil {
				return fmt.Errorf("no response %s, and none to copy its shape from", name)
			}
			r = clone(template).(*object)
			responses.set(name, r)
		}
		if template == nil {
			template = r
		}
		r.set("description", description(f))
		code, err := r.path("content", "application/problem+json", "schema")
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		all, ok := code.get("allOf").([]any)
		if !ok || len(all) != 2 {
			return fmt.Errorf("%s: the schema is not allOf [Problem, {code enum}]", name)
		}
		own, ok := all[1].(*object)
		if !ok {
			return fmt.Errorf("%s: the schema's second part is not an object", name)
		}
		enum, err := own.path("properties", "code")
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		var wire []string
		for _, c := range f.Codes {
			wire = append(wire, problem.Wire(c))
		}
		enum.set("enum", strings2any(wire))
	}
	for _, k := range responses.keys {
		if strings.HasPrefix(k, "Problem") && !slices.ContainsFunc(fams, func(f problem.Family) bool { return "Problem"+f.Name == k }) {
			return fmt.Errorf("response %s is no family of server/problem (families.go)", k)
		}
	}
	return nil
}

// description is a family's: what its routes do, then its codes by status.
func description(f problem.Family) string {
	var b strings.Builder
	b.WriteString(f.About + ": an error, as an RFC 9457 problem whose code is one of these (by status): ")
	last := 0
	for i, c := range f.Codes {
		switch st := problem.StatusOf(c); {
		case i == 0:
			b.WriteString(strconv.Itoa(st) + " ")
		case st != last:
			b.WriteString("; " + strconv.Itoa(st) + " ")
		default:
			b.WriteString(", ")
		}
		last = problem.StatusOf(c)
		b.WriteString(problem.Wire(c))
	}
	b.WriteString(". Each code's page, /problems/<code>, says what to do.")
	return b.String()
}

// wireCodes are the table's codes as clients see them, sorted.
func wireCodes() []string {
	var out []string
	for _, c := range problem.Codes() {
		out = append(out, problem.Wire(c))
	}
	slices.Sort(out)
	return out
}

// wireRules are the rules input codes report, as clients see them, sorted.
func wireRules() []string {
	var out []string
	for _, c := range problem.Codes() {
		for _, r := range problem.Reasons(c) {
			if w := problem.Wire(r); !slices.Contains(out, w) {
				out = append(out, w)
			}
		}
	}
	slices.Sort(out)
	return out
}

func strings2any(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// object is a JSON object that keeps its keys in the document's order, so
// that a rewrite changes only what it means to.
type object struct {
	keys []string
	vals map[string]any
}

func (o *object) get(k string) any { return o.vals[k] }

func (o *object) set(k string, v any) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

// path walks down nested objects.
func (o *object) path(keys ...string) (*object, error) {
	cur := o
	for i, k := range keys {
		next, ok := cur.vals[k].(*object)
		if !ok {
			return nil, fmt.Errorf("no object at %s", strings.Join(keys[:i+1], "."))
		}
		cur = next
	}
	return cur, nil
}

func clone(v any) any {
	switch x := v.(type) {
	case *object:
		c := &object{keys: slices.Clone(x.keys), vals: map[string]any{}}
		for k, e := range x.vals {
			c.vals[k] = clone(e)
		}
		return c
	case []any:
		c := make([]any, len(x))
		for i, e := range x {
			c[i] = clone(e)
		}
		return c
	}
	return v
}

// parse reads a JSON document into objects, slices, strings, json.Number,
// bools and nil.
func parse(doc []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	v, err := value(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err == nil {
		return nil, errors.New("more than one JSON value")
	}
	return v, nil
}

func value(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		o := &object{vals: map[string]any{}}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := value(dec)
			if err != nil {
				return nil, err
			}
			o.set(k.(string), v)
		}
		_, err := dec.Token() // }
		return o, err
	case json.Delim('['):
		a := []any{}
		for dec.More() {
			v, err := value(dec)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err := dec.Token() // ]
		return a, err
	}
	return tok, nil
}

// format writes v as the document is written: two spaces of indent, no
// HTML escaping, a final newline.
func format(v any) ([]byte, error) {
	var compact bytes.Buffer
	if err := write(&compact, v); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, compact.Bytes(), "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

func write(b *bytes.Buffer, v any) error {
	switch x := v.(type) {
	case *object:
		b.WriteByte('{')
		for i, k := range x.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := write(b, k); err != nil {
				return err
			}
			b.WriteByte(':')
			if err := write(b, x.vals[k]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := write(b, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	default:
		enc := json.NewEncoder(b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(x); err != nil {
			return err
		}
		b.Truncate(b.Len() - 1) // Encode's newline
	}
	return nil
}
