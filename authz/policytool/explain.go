package policytool

import (
	"fmt"
	"slices"
	"strings"

	facade "github.com/facade-dev/facade"
	"github.com/facade-dev/facade/authz"
	"github.com/facade-dev/facade/authz/compiled"
)

// Explain answers the question (pr.ID, obj, act) as the service would for
// pr: its groups (members of group:<name>), plan:K-P also covered by view
// on project:K, and, for a grade (obj student:S), the grade rules with
// pr's roles, the token's and the policy's (see ExplainGrade).
//
// A principal whose groups did not fit in its token (GroupsIncomplete) is
// told so: its group grants could not be checked.
func (p *Policy) Explain(pr facade.Principal, obj, act string) (compiled.Explanation, error) {
	x, err := p.explainFor(pr, obj, act)
	if err == nil && pr.GroupsIncomplete {
		x.Notes = append(x.Notes, "group grants could not be checked: the provider had more groups for "+pr.ID+
			" than fit in the token (groups overage), so the service saw none; the answer may change once the groups reach it")
	}
	return x, err
}

func (p *Policy) explainFor(pr facade.Principal, obj, act string) (compiled.Explanation, error) {
	if sid, ok := strings.CutPrefix(obj, authz.PrefixStudent); ok {
		x := p.ExplainGrade(pr, sid, act)
		if roles := p.Roles(pr); len(roles) > 0 {
			x.Notes = append(x.Notes, "roles of "+pr.ID+": "+strings.Join(roles, ", ")+" (each is asked in turn)")
		}
		return x, nil
	}
	if cid, ok := strings.CutPrefix(obj, authz.PrefixClass); ok {
		return p.ExplainClass(pr, cid, act), nil
	}
	q := compiled.SubjectOf(pr)
	x := p.pol.Explain(q, obj, act)
	if note := p.unknownAction(act); note != "" && !x.Allow {
		x.Notes = append(x.Notes, note)
	}
	if project, _, ok := strings.Cut(strings.TrimPrefix(obj, authz.PrefixPlan), "-"); !x.Allow && ok && strings.HasPrefix(obj, authz.PrefixPlan) && act == authz.ActView {
		if px := p.pol.Explain(q, authz.PrefixProject+project, act); px.Allow {
			px.Notes = append(px.Notes, fmt.Sprintf("results and artifacts of %s are also visible with view on %s%s", obj, authz.PrefixProject, project))
			return px, nil
		}
	}
	return x, nil
}

// ExplainGrade answers the grade question the service asks when pr reads
// (act view) or writes (act update) studentID's grade, exactly as the
// service decides it (authz, CanViewGrade and CanWriteGrade): a professor, by the token or by the
// policy (g, <sub or group:G>, role:professor), asks the policy about
// student:S; a student views their own grade; nobody else reaches grades.
func (p *Policy) ExplainGrade(pr facade.Principal, studentID, act string) compiled.Explanation {
	if _, err := facade.ParseStudentID(studentID); err != nil { // the explain tool reads the object as text: its edge
		return compiled.Explanation{Notes: []string{fmt.Sprintf("%q is not a student id (letters, digits and ._@-, at most 64): the service answers 400 before it asks", studentID)}}
	}
	if act != authz.ActView && act != authz.ActUpdate {
		return compiled.Explanation{Notes: []string{fmt.Sprintf("a grade is read (view) or written (update); the service never asks %q%s about one", act, authz.Suggest(act, []string{authz.ActView, authz.ActUpdate}))}}
	}
	if pr.ID == "" {
		return compiled.Explanation{Notes: []string{"a principal without an id reaches nothing"}}
	}
	if act != authz.ActView && pr.ID == studentID {
		return compiled.Explanation{Notes: []string{"built-in rule: nobody changes their own grade, whatever their roles and the policy say"}}
	}
	var x compiled.Explanation
	var roleLines []string
	professor := p.loaded.HasRole(pr, facade.RoleProfessor)
	if professor {
		roleLines = p.roleSource(pr, facade.RoleProfessor)
		x = p.pol.Explain(compiled.SubjectOf(pr), authz.PrefixStudent+studentID, act)
		if x.Allow {
			x.Chain = append(roleLines, x.Chain...)
			return x
		}
	}
	if p.loaded.HasRole(pr, facade.RoleStudent) && pr.ID == studentID && act == authz.ActView {
		return compiled.Explanation{Allow: true, Chain: p.roleSource(pr, facade.RoleStudent),
			Notes: []string{"built-in rule: role student views their own grade; no policy line is involved"}}
	}
	if professor {
		x.Chain = append(roleLines, x.Chain...)
		return x
	}
	if p.loaded.HasRole(pr, facade.RoleStudent) {
		return compiled.Explanation{Chain: p.roleSource(pr, facade.RoleStudent),
			Notes: []string{"built-in rule: role student views only their own grade and never writes one, whatever the policy says"}}
	}
	role := "no role"
	if roles := pr.TokenRoles(); len(roles) == 1 {
		role = fmt.Sprintf("role %q", roles[0])
	} else if len(roles) > 1 {
		role = fmt.Sprintf("roles %q", roles)
	}
	return compiled.Explanation{Notes: []string{fmt.Sprintf("built-in rule: only roles student and professor reach grades; %s has %s from its token and none from the policy "+
		"(a line \"g, %s, role:professor\", or one for a group it carries, would give it one)", pr.ID, role, compiled.QuoteField(pr.ID))}}
}

// ExplainClass answers a question about a whole class (view: its grade
// list, posting policy and summary; post: changing the policy and
// posting its grades) as the service decides it (authz CanViewClass,
// CanPostClass): a class grant counts for a principal of role professor,
// by the token or by the policy, only.
func (p *Policy) ExplainClass(pr facade.Principal, classID, act string) compiled.Explanation {
	x := p.pol.Explain(compiled.SubjectOf(pr), authz.PrefixClass+classID, act)
	if note := p.unknownAction(act); note != "" && !x.Allow {
		x.Notes = append(x.Notes, note)
	}
	switch {
	case !x.Allow:
		return x
	case pr.ID == "":
		return compiled.Explanation{Notes: []string{"a principal without an id reaches nothing"}}
	case !p.loaded.HasRole(pr, facade.RoleProfessor):
		return compiled.Explanation{Notes: append(x.Notes, fmt.Sprintf("built-in rule: a class grant counts only for role professor; %s has none "+
			"from its token or the policy (a line \"g, %s, role:professor\", or one for a group it carries, would give it one), so %s does not apply",
			pr.ID, compiled.QuoteField(pr.ID), x.Rule))}
	}
	x.Chain = append(p.roleSource(pr, facade.RoleProfessor), x.Chain...)
	return x
}

// unknownAction is a note for an action neither the service asks about
// nor any policy line names (a typo, most likely), with the nearest
// action; "" for a known one.
func (p *Policy) unknownAction(act string) string {
	note := authz.UnknownAction(act)
	if note == "" {
		return ""
	}
	if _, _, named := p.names(); slices.Contains(named, act) {
		return ""
	}
	return note
}

// roleSource says where pr's role comes from: the token, or the g lines
// that lead to role:<role> (from its id, or from a group its token carries).
func (p *Policy) roleSource(pr facade.Principal, role string) []string {
	if pr.HasTokenRole(role) {
		return []string{fmt.Sprintf("(token) %s has role %s", pr.ID, role)}
	}
	return p.pol.Chain(compiled.SubjectOf(pr), compiled.GroupRole, pr.ID, authz.PrefixRole+role)
}
