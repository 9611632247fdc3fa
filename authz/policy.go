package authz

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	facade "github.com/facade-dev/facade"
)

// Problem is one finding in model.conf or policy.csv, written for the ops
// person who maintains them.
type Problem struct {
	File string
	Line int // 1-based; 0 when the problem concerns the whole file
	Msg  string
	// Warning marks findings that do not stop the file from loading
	// (a duplicate line). Everything else refuses the file.
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

// lineKind says what a valid policy line means.
type lineKind int

const (
	kindGrant  lineKind = iota // p, SUB, OBJ, ACT
	kindMember                 // g, MEMBER, GROUP   (principal or group into a group)
	kindEnroll                 // g, student:S, class:C
)

// entry is one valid policy line.
type entry struct {
	line   int
	text   string   // as written, trimmed
	kind   lineKind //
	fields []string // after the ptype: [sub obj act] or [member group]
}

// casbinRule returns the casbin ptype (g or g2) and rule this line loads as.
// Grants become links from the subject to a permission node "OBJ ACT" (see
// model.conf for why they are not p rows).
func (e entry) casbinRule() (ptype string, rule []string) {
	switch e.kind {
	case kindGrant:
		return "g", []string{subjectNode(e.fields[0]), permNode(e.fields[1], e.fields[2])}
	case kindMember:
		return "g", []string{subjectNode(e.fields[0]), e.fields[1]}
	default:
		return "g2", []string{e.fields[0], e.fields[1]}
	}
}

// subjectNode maps a policy subject to its role-graph node: principals get
// the user: namespace, groups keep their kind:name.
func subjectNode(s string) string {
	if strings.Contains(s, ":") {
		return s
	}
	return prefixUser + s
}

// permNode names "act on obj" in the role graph. Neither part can contain a
// space, so the pair is unambiguous.
func permNode(obj, act string) string { return obj + " " + act }

// parsePolicy reads policy.csv text: "p, sub, obj, act" and "g, a, b" lines,
// "#" comment lines and blank lines. It returns the valid lines (without
// duplicates, in file order) and every problem found.
func parsePolicy(path string, data []byte) ([]entry, []Problem) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // a UTF-8 BOM from some editors
	var (
		entries  []entry
		problems []Problem
		firstAt  = map[string]int{}
	)
	for n, raw := 1, data; len(raw) > 0; n++ {
		var lineBytes []byte
		lineBytes, raw, _ = bytes.Cut(raw, []byte("\n"))
		text := strings.TrimSpace(string(lineBytes))
		if text == "" || text[0] == '#' {
			continue
		}
		e, msg := parseLine(text)
		if msg != "" {
			problems = append(problems, Problem{File: path, Line: n, Msg: msg})
			continue
		}
		e.line = n
		key := strings.Join(e.fields, "\x00") + "\x00" + strconv.Itoa(int(e.kind))
		if first, dup := firstAt[key]; dup {
			problems = append(problems, Problem{File: path, Line: n, Warning: true,
				Msg: fmt.Sprintf("duplicate of line %d; ignored", first)})
			continue
		}
		firstAt[key] = n
		entries = append(entries, e)
	}
	return entries, problems
}

// parseLine validates one non-comment line; msg is empty when it is valid.
func parseLine(text string) (e entry, msg string) {
	if strings.ContainsAny(text, `"`) {
		return e, "quoted fields are not supported"
	}
	fields := strings.Split(text, ",")
	for i := range fields {
		if fields[i] = strings.TrimSpace(fields[i]); fields[i] == "" {
			return e, fmt.Sprintf("field %d is empty", i+1)
		}
	}
	e.text, e.fields = text, fields[1:]
	switch fields[0] {
	case "p":
		if len(e.fields) != 3 {
			return e, fmt.Sprintf(`a p line has 3 fields after "p" (subject, object, action); found %d`, len(e.fields))
		}
		e.kind = kindGrant
		return e, checkGrant(e.fields[0], e.fields[1], e.fields[2])
	case "g":
		if len(e.fields) != 2 {
			return e, fmt.Sprintf(`a g line has 2 fields after "g" (member, group); found %d`, len(e.fields))
		}
		e.kind, msg = checkGrouping(e.fields[0], e.fields[1])
		return e, msg
	}
	return e, fmt.Sprintf("unknown line type %q: expected p or g", fields[0])
}

const subjectHelp = "expected a principal name (1-128 of A-Z a-z 0-9 . _ @ | + = / -) or a group kind:name such as team:platform"

func checkGrant(sub, obj, act string) string {
	if msg := checkSubject(sub); msg != "" {
		return msg
	}
	if !isAction(act) {
		return fmt.Sprintf("unknown action %q: expected view, update, view_account or transfer", act)
	}
	prefix, msg := checkObject(obj)
	if msg != "" {
		return msg
	}
	for _, a := range actionsFor[prefix] {
		if a == act {
			return ""
		}
	}
	return fmt.Sprintf("action %q does not apply to %s objects (allowed: %s)",
		act, prefix, strings.Join(actionsFor[prefix], ", "))
}

func checkSubject(sub string) string {
	switch {
	case strings.HasPrefix(sub, prefixStudent):
		return fmt.Sprintf("subject %q: student: names only appear in enrollment lines (g, student:S, class:C); grant to the principal's own name", sub)
	case strings.Contains(sub, "*"):
		return fmt.Sprintf("subject %q: wildcards are not supported", sub)
	case !validPrincipal(sub) && !validGroup(sub):
		return fmt.Sprintf("subject %q: %s", sub, subjectHelp)
	}
	return ""
}

func isAction(act string) bool {
	switch act {
	case actView, actUpdate, actViewAccount, actTransfer:
		return true
	}
	return false
}

// checkObject validates a p line's object and returns its prefix.
func checkObject(obj string) (prefix, msg string) {
	for _, p := range []string{prefixClass, prefixAccount, prefixProject, prefixPlan} {
		if id, ok := strings.CutPrefix(obj, p); ok {
			return p, checkObjectID(p, id, obj)
		}
	}
	return "", fmt.Sprintf("unknown object %q: expected class:ID, account:ID, project:KEY or plan:KEY-PLAN", obj)
}

func checkObjectID(prefix, id, obj string) string {
	switch prefix {
	case prefixClass, prefixAccount:
		if !facade.ValidID(id) {
			return fmt.Sprintf("malformed id in %q: must match ^[A-Za-z0-9._@-]{1,64}$", obj)
		}
	case prefixProject:
		if !facade.ValidProjectKey(id) {
			return fmt.Sprintf("malformed project key in %q: must match ^[A-Z][A-Z0-9]{0,63}$", obj)
		}
	case prefixPlan:
		if _, _, ok := splitPlan(id); !ok {
			return fmt.Sprintf("malformed plan in %q: expected plan:KEY-PLAN, KEY ^[A-Z][A-Z0-9]{0,63}$ and PLAN ^[A-Z0-9]{1,64}$", obj)
		}
	}
	return ""
}

// checkGrouping validates "g, member, group": an enrollment (student:S into
// class:C) or a membership (principal or group into a group).
func checkGrouping(member, group string) (lineKind, string) {
	if sid, ok := strings.CutPrefix(member, prefixStudent); ok {
		cid, isClass := strings.CutPrefix(group, prefixClass)
		switch {
		case !facade.ValidID(sid):
			return kindEnroll, fmt.Sprintf("malformed student id in %q: must match ^[A-Za-z0-9._@-]{1,64}$", member)
		case !isClass:
			return kindEnroll, fmt.Sprintf("%q: a student: line enrolls in a class (g, student:S, class:C)", group)
		case !facade.ValidID(cid):
			return kindEnroll, fmt.Sprintf("malformed class id in %q: must match ^[A-Za-z0-9._@-]{1,64}$", group)
		}
		return kindEnroll, ""
	}
	if strings.HasPrefix(group, prefixClass) {
		return kindMember, fmt.Sprintf("only students join a class: write g, student:%s, %s (professors get a p line)", member, group)
	}
	if msg := checkSubject(member); msg != "" {
		return kindMember, msg
	}
	if !validGroup(group) {
		return kindMember, fmt.Sprintf("group %q: expected kind:name such as team:platform (kinds class, account, project, plan, student and user are reserved)", group)
	}
	if member == group {
		return kindMember, fmt.Sprintf("%q is made a member of itself", group)
	}
	return kindMember, ""
}
