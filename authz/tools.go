package authz

import (
	"bufio"
	"bytes"
	"fmt"
	"slices"
	"strings"

	facade "github.com/facade-dev/facade"
)

// Policy is a model and policy loaded for the operator tools (`facade
// policy ...`): the same decisions as a serving Authorizer, plus the
// questions ops ask about a policy.
type Policy struct {
	st                    *state
	modelPath, policyPath string
	Problems              []Problem // warnings found while loading
	usage                 *Usage    // AttachUsage
	cited                 map[string]string
}

// Open loads modelPath and policyPath; files with refusing problems are an
// error naming the first (file:line).
func Open(modelPath, policyPath string) (*Policy, error) {
	st, problems, err := load(modelPath, policyPath)
	if err != nil {
		return nil, err
	}
	return &Policy{st: st, modelPath: modelPath, policyPath: policyPath, Problems: problems}, nil
}

// Decider is "index" when the service decides the model with its own index,
// "casbin" when casbin's Enforce does.
func (p *Policy) Decider() string { return p.st.decider.kind() }

// Family names the recognized model family, or why casbin decides.
func (p *Policy) Family() string { return p.st.family }

// Hash is the content hash /readyz and the metric show for these files.
func (p *Policy) Hash() string { return p.st.hash }

// Enforce is casbin's Enforce(sub, obj, act) on these files.
func (p *Policy) Enforce(sub, obj, act string) bool { return p.st.enforce(subject{id: sub}, obj, act) }

// Explanation says why a question was decided as it was.
type Explanation struct {
	Allow bool
	Rule  string   // the deciding policy line, "file:line: text"; empty when nothing matched
	Chain []string // the g lines that took sub (then obj) to the deciding line's sub and obj
	Notes []string // built-in rules, or what was searched
}

// Explain answers the question (pr.ID, obj, act) as the service would for
// pr: its groups (members of group:<name>), plan:K-P also covered by view
// on project:K, and, for a grade (obj student:S), the grade rules with
// pr's roles, the token's and the policy's (see ExplainGrade).
//
// A principal whose groups did not fit in its token (GroupsIncomplete) is
// told so: its group grants could not be checked.
func (p *Policy) Explain(pr facade.Principal, obj, act string) (Explanation, error) {
	x, err := p.explainFor(pr, obj, act)
	if err == nil && pr.GroupsIncomplete {
		x.Notes = append(x.Notes, "group grants could not be checked: the provider had more groups for "+pr.ID+
			" than fit in the token (groups overage), so the service saw none; the answer may change once the groups reach it")
	}
	return x, err
}

// Roles are pr's roles under this policy: its token's and those the
// policy gives it, sorted (as the service shows them on /auth/me).
func (p *Policy) Roles(pr facade.Principal) []string { return p.st.rolesOf(pr) }

func (p *Policy) explainFor(pr facade.Principal, obj, act string) (Explanation, error) {
	if sid, ok := strings.CutPrefix(obj, prefixStudent); ok {
		x := p.ExplainGrade(pr, sid, act)
		if roles := p.Roles(pr); len(roles) > 0 {
			x.Notes = append(x.Notes, "roles of "+pr.ID+": "+strings.Join(roles, ", ")+" (each is asked in turn)")
		}
		return x, nil
	}
	q := subjectOf(pr)
	x := p.explain(q, obj, act)
	if note := p.unknownAction(act); note != "" && !x.Allow {
		x.Notes = append(x.Notes, note)
	}
	if project, _, ok := strings.Cut(strings.TrimPrefix(obj, prefixPlan), "-"); !x.Allow && ok && strings.HasPrefix(obj, prefixPlan) && act == actView {
		if px := p.explain(q, prefixProject+project, act); px.Allow {
			px.Notes = append(px.Notes, fmt.Sprintf("results and artifacts of %s are also visible with view on %s%s", obj, prefixProject, project))
			return px, nil
		}
	}
	return x, nil
}

// ExplainGrade answers the grade question the service asks when pr reads
// (act view) or writes (act update) studentID's grade, exactly as the
// service decides it (state.grade): a professor, by the token or by the
// policy (g, <sub or group:G>, role:professor), asks the policy about
// student:S; a student views their own grade; nobody else reaches grades.
func (p *Policy) ExplainGrade(pr facade.Principal, studentID, act string) Explanation {
	st := p.st
	if _, err := facade.ParseStudentID(studentID); err != nil { // the explain tool reads the object as text: its edge
		return Explanation{Notes: []string{fmt.Sprintf("%q is not a student id (letters, digits and ._@-, at most 64): the service answers 400 before it asks", studentID)}}
	}
	if act != actView && act != actUpdate {
		return Explanation{Notes: []string{fmt.Sprintf("a grade is read (view) or written (update); the service never asks %q%s about one", act, suggestOf(act, []string{actView, actUpdate}))}}
	}
	if pr.ID == "" {
		return Explanation{Notes: []string{"a principal without an id reaches nothing"}}
	}
	if act != actView && pr.ID == studentID {
		return Explanation{Notes: []string{"built-in rule: nobody changes their own grade, whatever their roles and the policy say"}}
	}
	var x Explanation
	var roleLines []string
	professor := st.hasRole(pr, facade.RoleProfessor)
	if professor {
		roleLines = p.roleSource(pr, facade.RoleProfessor)
		x = p.explain(subjectOf(pr), prefixStudent+studentID, act)
		if x.Allow {
			x.Chain = append(roleLines, x.Chain...)
			return x
		}
	}
	if st.hasRole(pr, facade.RoleStudent) && pr.ID == studentID && act == actView {
		return Explanation{Allow: true, Chain: p.roleSource(pr, facade.RoleStudent),
			Notes: []string{"built-in rule: role student views their own grade; no policy line is involved"}}
	}
	if professor {
		x.Chain = append(roleLines, x.Chain...)
		return x
	}
	if st.hasRole(pr, facade.RoleStudent) {
		return Explanation{Chain: p.roleSource(pr, facade.RoleStudent),
			Notes: []string{"built-in rule: role student views only their own grade and never writes one, whatever the policy says"}}
	}
	role := "no role"
	if roles := pr.TokenRoles(); len(roles) == 1 {
		role = fmt.Sprintf("role %q", roles[0])
	} else if len(roles) > 1 {
		role = fmt.Sprintf("roles %q", roles)
	}
	return Explanation{Notes: []string{fmt.Sprintf("built-in rule: only roles student and professor reach grades; %s has %s from its token and none from the policy "+
		"(a line \"g, %s, role:professor\", or one for a group it carries, would give it one)", pr.ID, role, csvQuote(pr.ID))}}
}

// unknownAction is a note for an action neither the service asks about
// nor any policy line names (a typo, most likely), with the nearest
// action; "" for a known one.
func (p *Policy) unknownAction(act string) string {
	if isAction(act) {
		return ""
	}
	_, _, named := p.names()
	if slices.Contains(named, act) {
		return ""
	}
	return fmt.Sprintf("unknown action %q%s: the service asks for %s", act, suggest(act), strings.Join(actions, ", "))
}

// roleSource says where pr's role comes from: the token, or the g lines
// that lead to role:<role> (from its id, or from a group its token carries).
func (p *Policy) roleSource(pr facade.Principal, role string) []string {
	if pr.HasTokenRole(role) {
		return []string{fmt.Sprintf("(token) %s has role %s", pr.ID, role)}
	}
	return p.chainFor(subjectOf(pr), groupRole, pr.ID, prefixRole+role)
}

// csvQuote writes one policy.csv field, quoted by casbin's CSV rules when
// it needs it (a comma, a quote or a line break, a space at either end).
func csvQuote(f string) string {
	if f != "" && !strings.ContainsAny(f, ",\"\r\n") && strings.TrimSpace(f) == f {
		return f
	}
	return `"` + strings.ReplaceAll(f, `"`, `""`) + `"`
}

// explain is the casbin question alone.
func (p *Policy) explain(q subject, obj, act string) Explanation {
	switch d := p.st.decider.(type) {
	case *index:
		return p.explainIndex(d, q, obj, act)
	case *casbinDecider:
		allow, row, err := d.explain(q, obj, act)
		x := Explanation{Allow: allow && err == nil}
		if err != nil {
			x.Notes = append(x.Notes, "casbin could not evaluate the question: deny")
		}
		if len(row) > 0 {
			x.Rule = p.cite(row)
		}
		x.Notes = append(x.Notes, "decided by casbin's Enforce (the model is not one the index decides): no chain of g links is shown")
		return x
	}
	return Explanation{}
}

func (p *Policy) explainIndex(x *index, q subject, obj, act string) Explanation {
	sub := q.id
	if g := x.shape.guard; g != nil && g.MatchString(sub) {
		return Explanation{Notes: []string{fmt.Sprintf("%q matches the matcher's !regexMatch(r.sub, %q): it names a group or an object, never a principal", sub, x.shape.guardSrc)}}
	}
	type via struct{ sub, obj string }
	vias := map[int]via{}
	allow, at := x.decide(q, obj, act, func(i int, s, o string) {
		if _, ok := vias[i]; !ok {
			vias[i] = via{s, o}
		}
	})
	viaSub, viaObj := vias[at].sub, vias[at].obj
	e := Explanation{Allow: allow}
	if at < 0 {
		e.Notes = append(e.Notes, p.searched(x, q, obj, act))
		return e
	}
	r := x.rules[at]
	e.Rule = r.cite(p.policyPath)
	e.Chain = append(p.chainFor(q, x.shape.subRole, sub, viaSub), p.chainFor(q, x.shape.objRole, obj, viaObj)...)
	if viaObj != obj && !slices.Contains(x.reach(x.shape.objRole, x.objs, obj, q), viaObj) {
		e.Notes = append(e.Notes, fmt.Sprintf("%s matches the wildcard %s (%s)", obj, viaObj, x.shape.objMatch))
	}
	if !allow {
		e.Notes = append(e.Notes, "a deny rule matched: deny wins over any allow")
	}
	return e
}

// chainFor is chain with q's token groups: when the policy's own lines do
// not lead from q.id to to, the chain starts at the group that does.
func (p *Policy) chainFor(q subject, g, from, to string) []string {
	if g == "" || from == to {
		return nil
	}
	if lines := p.chain(g, from, to); lines != nil || g != groupRole || from != q.id {
		return lines
	}
	for _, grp := range q.groups {
		token := fmt.Sprintf("(token groups) %s is a member of %s", q.id, grp)
		if grp == to {
			return []string{token}
		}
		if lines := p.chain(g, grp, to); lines != nil {
			return append([]string{token}, lines...)
		}
	}
	return nil
}

// chain cites the g lines from -> ... -> to in role definition g.
func (p *Policy) chain(g, from, to string) []string {
	if g == "" || from == to {
		return nil
	}
	links := linksOf(p.st.rules, g)
	names := newGraph(links).chain(from, to)
	var lines []string
	for i := 1; i < len(names); i++ {
		for _, r := range p.st.rules {
			if r.ptype == g && r.fields[0] == names[i-1] && r.fields[1] == names[i] {
				lines = append(lines, r.cite(p.policyPath))
				break
			}
		}
	}
	return lines
}

// cite finds the policy line of a p row casbin returned.
func (p *Policy) cite(row []string) string {
	if i := p.ruleOf(row); i >= 0 {
		return p.st.rules[i].cite(p.policyPath)
	}
	return "p, " + strings.Join(row, ", ")
}

// ruleOf is the index of the p rule with fields row, or -1.
func (p *Policy) ruleOf(row []string) int {
	for i, r := range p.st.rules {
		if r.ptype == "p" && slices.Equal(r.fields, row) {
			return i
		}
	}
	return -1
}

func (p *Policy) searched(x *index, q subject, obj, act string) string {
	who := q.id
	if gs := x.reach(x.shape.subRole, x.subs, q.id, q); len(gs) > 0 {
		who += " or its groups (" + strings.Join(gs, ", ") + ")"
	}
	what := obj
	if os := x.reach(x.shape.objRole, x.objs, obj, q); len(os) > 0 {
		what += " or its groups (" + strings.Join(os, ", ") + ")"
	}
	return fmt.Sprintf("no policy line grants %s on %s to %s", act, what, who)
}

// TestResult is the outcome of a `policy test` file.
type TestResult struct {
	Cases      int
	Mismatches []string // "file:line: want allow, got deny: sub obj act" and explain's reasoning
}

// RunTests checks a file of expected decisions, one per line, blank lines
// and # comments aside, in either of two forms:
//
//	allow|deny SUB OBJ ACT                     SUB is ID or ID+group:NAME+...
//	allow|deny, SUB, OBJ, ACT[, group:NAME]... the CSV form, quoted as policy.csv is
//
// Each is the casbin question (sub, obj, act), as stock casbin answers it,
// asked as SUB carrying the named groups in its token: carol+group:devs
// asks as carol, a member of group:devs. A group name with a space, '+' or
// ',' needs the CSV form ("deny, carol, account:1, view_account, \"group:Domain
// Users\""). A malformed line is an error.
func (p *Policy) RunTests(path string, data []byte) (TestResult, error) {
	var res TestResult
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		want, q, obj, act, msg := parseTestLine(line)
		if msg != "" {
			return res, fmt.Errorf("%s:%d: %s", path, n, msg)
		}
		res.Cases++
		x := p.explain(q, obj, act)
		if x.Allow == (want == "allow") {
			continue
		}
		got := map[bool]string{true: "allow", false: "deny"}[x.Allow]
		m := fmt.Sprintf("%s:%d: want %s, got %s: %s", path, n, want, got, line)
		for _, l := range x.Lines() {
			m += "\n    " + l
		}
		res.Mismatches = append(res.Mismatches, m)
	}
	return res, sc.Err()
}

// testLineForms is what a malformed test line is told.
const testLineForms = `expected "allow|deny SUB[+group:NAME...] OBJ ACT" or, for group names with a space, '+' or ',', the CSV form "allow|deny, SUB, OBJ, ACT, \"group:NAME\"..."`

// parseTestLine reads one line of a test file (see RunTests); msg says
// what is wrong with a malformed one.
func parseTestLine(line string) (want string, q subject, obj, act, msg string) {
	var id string
	var names []string
	if strings.ContainsAny(line, `,"`) {
		f, _, problem := splitCSV(line)
		if problem != "" {
			return "", q, "", "", problem + "; " + testLineForms
		}
		if len(f) < 4 {
			return "", q, "", "", testLineForms
		}
		want, id, obj, act = f[0], f[1], f[2], f[3]
		for _, g := range f[4:] {
			name, ok := strings.CutPrefix(g, prefixGroup)
			if !ok || !facade.ValidGroupName(name) {
				return "", q, "", "", fmt.Sprintf("%q: each field after ACT is group:NAME, NAME 1 to %d printable characters", g, facade.MaxGroupNameLen)
			}
			names = append(names, name)
		}
	} else {
		f := strings.Fields(line)
		if len(f) != 4 {
			return "", q, "", "", testLineForms
		}
		want, obj, act = f[0], f[2], f[3]
		var rest string
		id, rest, _ = strings.Cut(f[1], "+")
		if rest != "" {
			for _, g := range strings.Split(rest, "+") {
				name, ok := strings.CutPrefix(g, prefixGroup)
				if !ok || !facade.ValidGroupName(name) {
					return "", q, "", "", fmt.Sprintf("%q: SUB is ID or ID+group:NAME+...", f[1])
				}
				names = append(names, name)
			}
		}
	}
	switch {
	case want != "allow" && want != "deny":
		return "", q, "", "", testLineForms
	case id == "" || obj == "" || act == "":
		return "", q, "", "", "SUB, OBJ and ACT must not be empty; " + testLineForms
	}
	return want, subjectWith(id, names), obj, act, ""
}

// Lines formats an explanation for people: the deciding rule, the chain,
// then notes prefixed "# ".
func (x Explanation) Lines() []string {
	var lines []string
	lines = append(lines, x.Chain...)
	if x.Rule != "" {
		lines = append(lines, x.Rule)
	}
	for _, n := range x.Notes {
		lines = append(lines, "# "+n)
	}
	return lines
}

// names returns every name the policy mentions as a p subject or in g
// lines (principals and groups), and every p object, g name with a known
// object prefix, and p action.
func (p *Policy) names() (subjects, objects, actions []string) {
	for _, r := range p.st.rules {
		if len(r.fields) < 2 {
			continue
		}
		if r.ptype == "p" {
			subjects = append(subjects, r.fields[0])
			objects = append(objects, r.fields[1])
			if len(r.fields) > 2 {
				actions = append(actions, r.fields[2])
			}
			continue
		}
		for _, n := range r.fields[:2] {
			if _, ok := objectKind(n); ok && !strings.ContainsAny(n, "*?[{") {
				objects = append(objects, n)
			} else {
				subjects = append(subjects, n)
			}
		}
	}
	return sortedStrings(subjects), sortedStrings(objects), sortedStrings(actions)
}

// asGroup decides (name, obj, act) for a group name as its members get it:
// the colon guard, which keeps a token from posing as a group, is not
// applied (index only; casbin's Enforce always applies the model).
func (p *Policy) asGroup(name, obj, act string) bool {
	if x, ok := p.st.decider.(*index); ok && x.shape.guard != nil {
		s := *x.shape
		s.guard = nil
		y := *x
		y.shape = &s
		return y.enforce(subject{id: name}, obj, act)
	}
	return p.st.enforce(subject{id: name}, obj, act)
}

// Who returns every principal and every group that may act on obj
// (principals: names without a colon, as a token sub would be), each
// principal asked as carrying tokenGroups (group names, as a token's).
func (p *Policy) Who(obj, act string, tokenGroups []string) (principals, groups []string) {
	subjects, _, _ := p.names()
	for _, s := range subjects {
		if strings.Contains(s, ":") {
			if p.asGroup(s, obj, act) {
				groups = append(groups, s)
			}
		} else if p.st.enforce(subjectWith(s, tokenGroups), obj, act) {
			principals = append(principals, s)
		}
	}
	return principals, groups
}

// What returns every (object, action) the policy names that pr may do,
// through its groups (the policy's and its token's), objects' groups and
// wildcards ("obj act" pairs, sorted). A group name (with a colon) is
// asked as its members get it.
func (p *Policy) What(pr facade.Principal) []string {
	_, objects, actions := p.names()
	var out []string
	for _, o := range objects {
		for _, a := range actions {
			if p.asGroupOrPrincipal(pr, o, a) {
				out = append(out, o+" "+a)
			}
		}
	}
	return out
}

func (p *Policy) asGroupOrPrincipal(pr facade.Principal, obj, act string) bool {
	if strings.Contains(pr.ID, ":") && len(pr.Groups) == 0 {
		return p.asGroup(pr.ID, obj, act)
	}
	return p.st.enforce(subjectOf(pr), obj, act)
}

// Change is one decision that differs between two policies.
type Change struct {
	Sub, Obj, Act string
	Now           bool // the decision under the new policy
}

func (c Change) String() string {
	if c.Now {
		return fmt.Sprintf("+ allow %s %s %s", c.Sub, c.Obj, c.Act)
	}
	return fmt.Sprintf("- allow %s %s %s", c.Sub, c.Obj, c.Act)
}

// maxDiffQuestions bounds a diff: principals x objects x actions.
const maxDiffQuestions = 20_000_000

// Diff returns the decisions that change from old to new for every
// principal, object and action either policy mentions.
func Diff(old, new *Policy) ([]Change, error) {
	s1, o1, a1 := old.names()
	s2, o2, a2 := new.names()
	var subs []string
	for _, s := range sortedStrings(append(s1, s2...)) {
		if !strings.Contains(s, ":") {
			subs = append(subs, s)
		}
	}
	objs, acts := sortedStrings(append(o1, o2...)), sortedStrings(append(a1, a2...))
	if n := len(subs) * len(objs) * len(acts); n > maxDiffQuestions {
		return nil, fmt.Errorf("authz: %d questions to compare (over %d): diff smaller files", n, maxDiffQuestions)
	}
	var changes []Change
	for _, s := range subs {
		for _, o := range objs {
			for _, a := range acts {
				if was, now := old.Enforce(s, o, a), new.Enforce(s, o, a); was != now {
					changes = append(changes, Change{s, o, a, now})
				}
			}
		}
	}
	return changes, nil
}
