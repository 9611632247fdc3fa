package authz

import (
	"fmt"
	"strings"

	facade "github.com/facade-dev/facade"
)

// Explain answers one question as the service would, for `facade policy
// explain`, and says why. obj is one of class:C, account:ID, project:K,
// plan:K-P (policy grants) or student:S (a grade: act view for GET, update
// for POST/PUT, decided by role). For an allow, lines are the policy lines
// that grant it, as written and prefixed "file:line: ", in the order they
// apply (membership, then grant). Lines starting "# " are notes: a built-in
// grade rule, or why nothing granted a deny. err reports unreadable or
// invalid files and malformed questions.
func Explain(modelPath, policyPath, sub, role, obj, act string) (allow bool, lines []string, err error) {
	f, err := readFiles(modelPath, policyPath)
	if err != nil {
		return false, nil, err
	}
	m, entries, problems := f.check()
	if HasErrors(problems) {
		return false, nil, firstError(problems)
	}
	st, err := build(m, entries)
	if err != nil {
		return false, nil, fmt.Errorf("authz: casbin could not load %s: %w", policyPath, err)
	}
	x := newExplainer(st, entries, policyPath)
	if sid, ok := strings.CutPrefix(obj, prefixStudent); ok {
		return x.grade(facade.Principal{ID: sub, Role: role}, sid, act)
	}
	prefix, msg := checkObject(obj)
	if msg == "" {
		msg = checkGrant("probe", obj, act) // the action must fit the object
	}
	if msg != "" {
		return false, nil, fmt.Errorf("authz: %s", msg)
	}
	if prefix == prefixPlan {
		return x.plan(sub, obj)
	}
	return x.grant(sub, obj, act)
}

type explainer struct {
	st     *state
	policy string
	byLink map[string]entry // "ptype\x00from\x00to" -> the line that made the link
}

func newExplainer(st *state, entries []entry, policyPath string) *explainer {
	x := &explainer{st: st, policy: policyPath, byLink: make(map[string]entry, len(entries))}
	for _, e := range entries {
		ptype, rule := e.casbinRule()
		x.byLink[ptype+"\x00"+rule[0]+"\x00"+rule[1]] = e
	}
	return x
}

func (x *explainer) cite(ptype, from, to string) string {
	e := x.byLink[ptype+"\x00"+from+"\x00"+to]
	return fmt.Sprintf("%s:%d: %s", x.policy, e.line, e.text)
}

// chain cites the lines along the shortest path from sub to "obj act".
func (x *explainer) chain(sub, obj, act string) []string {
	nodes := x.st.members.path(prefixUser+sub, permNode(obj, act))
	var lines []string
	for i := 1; i < len(nodes); i++ {
		lines = append(lines, x.cite("g", nodes[i-1], nodes[i]))
	}
	return lines
}

func (x *explainer) grant(sub, obj, act string) (bool, []string, error) {
	if x.st.granted(sub, obj, act) {
		return true, x.chain(sub, obj, act), nil
	}
	return false, []string{x.noGrant(sub, act+" on "+obj)}, nil
}

func (x *explainer) plan(sub, obj string) (bool, []string, error) {
	projectKey, planKey, _ := splitPlan(strings.TrimPrefix(obj, prefixPlan))
	if !x.st.planVisible(sub, projectKey, planKey) {
		return false, []string{x.noGrant(sub, "view on "+obj+" or on "+prefixProject+projectKey)}, nil
	}
	if lines := x.chain(sub, obj, actView); lines != nil {
		return true, lines, nil
	}
	return true, x.chain(sub, prefixProject+projectKey, actView), nil
}

func (x *explainer) grade(p facade.Principal, studentID, act string) (bool, []string, error) {
	if act != actView && act != actUpdate {
		return false, nil, fmt.Errorf("authz: a grade takes act view (GET) or update (POST/PUT), not %q", act)
	}
	if !facade.ValidID(studentID) {
		return false, nil, fmt.Errorf("authz: malformed student id %q: must match ^[A-Za-z0-9._@-]{1,64}$", studentID)
	}
	allow := x.st.grade(p, studentID, act)
	switch {
	case p.ID == "":
		return false, []string{"# a principal without a sub is never allowed anything"}, nil
	case p.Role == facade.RoleStudent && act == actUpdate:
		return false, []string{"# built-in rule: role student never writes grades, whatever the policy says"}, nil
	case p.Role == facade.RoleStudent && allow:
		return true, []string{"# built-in rule: role student views their own grade (sub equals the student id); no policy line is involved"}, nil
	case p.Role == facade.RoleStudent:
		return false, []string{"# built-in rule: role student views only their own grade"}, nil
	case p.Role != facade.RoleProfessor:
		return false, []string{fmt.Sprintf("# built-in rule: only roles student and professor reach grades, not role %q", p.Role)}, nil
	}
	class, ok := x.st.teachingClass(p.ID, studentID, act)
	if !ok {
		return false, []string{x.notTeaching(p.ID, studentID, act)}, nil
	}
	lines := []string{x.cite("g2", prefixStudent+studentID, class)}
	return true, append(lines, x.chain(p.ID, class, act)...), nil
}

func (x *explainer) notTeaching(sub, studentID, act string) string {
	classes := x.st.enrolls.direct(prefixStudent + studentID)
	if len(classes) == 0 {
		return fmt.Sprintf("# student:%s is not enrolled in any class", studentID)
	}
	return x.noGrant(sub, act+" on any class student:"+studentID+" is enrolled in ("+strings.Join(classes, ", ")+")")
}

// noGrant is the note for a deny by policy, naming the groups searched.
func (x *explainer) noGrant(sub, what string) string {
	if sub == "" {
		return "# a principal without a sub is never allowed anything"
	}
	var groups []string
	reachable, _ := x.st.members.GetImplicitRoles(prefixUser + sub)
	for _, n := range reachable {
		if !strings.Contains(n, " ") { // permission nodes are "obj act"
			groups = append(groups, n)
		}
	}
	who := sub
	if len(groups) > 0 {
		who += " or its groups (" + strings.Join(groups, ", ") + ")"
	}
	return fmt.Sprintf("# no policy line grants %s to %s", what, who)
}
