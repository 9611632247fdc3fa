package authz

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/casbin/casbin/v2/model"

	facade "github.com/facade-dev/facade"
	"github.com/facade-dev/facade/authz/compiled"
)

// lint reports what casbin accepts but ops want to hear about: actions and
// objects the service never asks about (typos: refused), grants to groups
// nobody is in, group cycles, chains longer than casbin follows, effects
// casbin ignores (the graph findings only when graphs is set: they are
// warnings, for `policy check`). Vocabulary checks apply to models whose p rows are
// sub, obj, act[, eft]; other models only get the graph findings.
func lint(path string, m model.Model, rules []compiled.Rule, graphs bool) []compiled.Problem {
	var problems []compiled.Problem
	add := func(r compiled.Rule, warning bool, format string, args ...any) {
		problems = append(problems, compiled.Problem{File: path, Line: r.Line, Warning: warning, Msg: fmt.Sprintf(format, args...)})
	}
	pt := m["p"]["p"].Tokens
	standard := slices.Equal(pt, []string{"p_sub", "p_obj", "p_act"}) || slices.Equal(pt, []string{"p_sub", "p_obj", "p_act", "p_eft"})
	members := map[string]bool{}
	for _, r := range rules {
		if strings.HasPrefix(r.Type, "g") && len(r.Fields) >= 2 {
			members[r.Fields[1]] = true
		}
	}
	problems = append(problems, unreachableGroups(path, m, rules, members)...)
	problems = append(problems, misspelledRoles(path, m, rules)...)
	words := compiled.VocabularyOf(m)
	for _, r := range rules {
		if r.Type != "p" || !standard {
			continue
		}
		sub, obj, act := r.Fields[0], r.Fields[1], r.Fields[2]
		actNamed := words.Names("act", act)
		if unknown := UnknownAction(act); unknown != "" && !actNamed {
			add(r, false, "%s", unknown)
			continue
		}
		if kind, ok := ObjectKind(obj); !ok && !words.Names("obj", obj) {
			add(r, false, "unknown object %q: expected class:ID, account:ID, project:KEY, plan:KEY-PLAN or student:ID (or a wildcard such as project:WEB*)", obj)
			continue
		} else if kind != "" && !actNamed && !actionFits(kind, act) {
			add(r, true, "action %q is never asked about %s objects: this line can never matter", act, kind)
		}
		// group:NAME gets its members from tokens, not from g lines.
		if words.Guarded && strings.Contains(sub, ":") && !members[sub] && !strings.HasPrefix(sub, compiled.GroupPrefix) {
			add(r, true, "grant to group %q, which nobody is in: this line can never matter", sub)
		}
		if len(r.Fields) == 4 && r.Fields[3] != "allow" && r.Fields[3] != "deny" {
			add(r, true, "eft %q is neither allow nor deny: casbin ignores this line", r.Fields[3])
		}
	}
	if !graphs {
		return problems
	}
	if standard {
		problems = append(problems, classGrantsWithoutRole(path, m, rules)...)
	}
	for g := range m["g"] {
		problems = append(problems, compiled.GraphFindings(path, rules, g)...)
	}
	return problems
}

// unreachableGroups warns of group:NAME subjects no principal can ever be
// in: NAME is no name a token or sign-in can carry (facade.ValidGroupName:
// empty, over 256 characters, a control character) and no g line gives
// the group members. casbin loads such a line; it never matters. (A valid
// NAME gets its members from tokens, however it is spelled: acme:payments,
// "Domain Users".)
func unreachableGroups(path string, m model.Model, rules []compiled.Rule, members map[string]bool) []compiled.Problem {
	if _, ok := m["g"][compiled.GroupRole]; !ok {
		return nil // no g: token groups go nowhere, and lint's other findings say so
	}
	var problems []compiled.Problem
	warned := map[string]bool{}
	for _, r := range rules {
		var subjects []string
		switch {
		case r.Type == "p" && len(r.Fields) >= 1:
			subjects = r.Fields[:1]
		case r.Type == compiled.GroupRole && len(r.Fields) == 2:
			subjects = r.Fields[:1] // the group a line puts into another
		}
		for _, sub := range subjects {
			name, ok := strings.CutPrefix(sub, compiled.GroupPrefix)
			if !ok || facade.ValidGroupName(name) || members[sub] || warned[sub] {
				continue
			}
			warned[sub] = true
			problems = append(problems, compiled.Problem{File: path, Line: r.Line, Warning: true,
				Msg: fmt.Sprintf("%q is no group a token can carry (%s) and no g line gives it members: this line can never matter", sub, whyNotGroupName(name))})
		}
	}
	return problems
}

// classGrantsWithoutRole warns, once per subject, of a class grant (view,
// update or post on class:C) to a subject that no role: line makes a
// professor, neither itself, nor a group it is in, nor a member of it,
// when the policy gives the professor role through role: lines at all (a
// policy without one takes every role from tokens, and would warn of
// every class grant). Such a grant takes effect only for a principal
// whose token's role claim says professor: with a provider that sends no
// role, never.
func classGrantsWithoutRole(path string, m model.Model, rules []compiled.Rule) []compiled.Problem {
	if _, ok := m["g"][compiled.GroupRole]; !ok {
		return nil
	}
	roles := newRoleIndex(rules)
	members := map[string][]string{}
	anyProfessor := false
	for _, r := range rules {
		if r.Type == compiled.GroupRole && len(r.Fields) == 2 {
			members[r.Fields[1]] = append(members[r.Fields[1]], r.Fields[0])
			anyProfessor = anyProfessor || r.Fields[1] == PrefixRole+facade.RoleProfessor
		}
	}
	if !anyProfessor {
		return nil
	}
	professor := func(name string) bool { _, ok := roles[name][facade.RoleProfessor]; return ok }
	var problems []compiled.Problem
	warned := map[string]bool{}
	for _, r := range rules {
		if r.Type != "p" || len(r.Fields) < 3 || !strings.HasPrefix(r.Fields[1], PrefixClass) || !actionFits(PrefixClass, r.Fields[2]) ||
			len(r.Fields) == 4 && r.Fields[3] == "deny" {
			continue
		}
		sub := r.Fields[0]
		if warned[sub] || professor(sub) || anyMember(sub, members, professor) {
			continue
		}
		warned[sub] = true
		problems = append(problems, compiled.Problem{File: path, Line: r.Line, Warning: true,
			Msg: fmt.Sprintf("class grant to %q, whom no role: line makes a professor (g, %s, role:professor; or one for a group it is in or a member of it): "+
				"a class grant counts for role professor only, so this line takes effect only for a principal whose token's role claim says professor",
				sub, compiled.QuoteField(sub))})
	}
	return problems
}

// anyMember reports whether some member of group, at any depth, is ok.
func anyMember(group string, members map[string][]string, ok func(string) bool) bool {
	seen := map[string]bool{group: true}
	level := []string{group}
	for len(level) > 0 {
		var next []string
		for _, g := range level {
			for _, m := range members[g] {
				if seen[m] {
					continue
				}
				if ok(m) {
					return true
				}
				seen[m] = true
				next = append(next, m)
			}
		}
		level = next
	}
	return false
}

// misspelledRoles warns of a g line giving a role a letter or two away
// from one with grade rules (role:profesor): a role is any string, so
// casbin and the service accept it, and it gives nothing.
func misspelledRoles(path string, m model.Model, rules []compiled.Rule) []compiled.Problem {
	if _, ok := m["g"][compiled.GroupRole]; !ok {
		return nil
	}
	var problems []compiled.Problem
	known := []string{facade.RoleProfessor, facade.RoleStudent}
	for _, r := range rules {
		if r.Type != compiled.GroupRole || len(r.Fields) != 2 {
			continue
		}
		role, ok := strings.CutPrefix(r.Fields[1], PrefixRole)
		if !ok || slices.Contains(known, role) {
			continue
		}
		if hint := Suggest(role, known); hint != "" {
			problems = append(problems, compiled.Problem{File: path, Line: r.Line, Warning: true,
				Msg: fmt.Sprintf("role %q%s: only roles professor and student carry grade rules", role, hint)})
		}
	}
	return problems
}

// whyNotGroupName says why name is not facade.ValidGroupName, in words.
func whyNotGroupName(name string) string {
	switch {
	case name == "":
		return "the name after group: is empty"
	case !utf8.ValidString(name):
		return "the name is not valid UTF-8"
	case utf8.RuneCountInString(name) > facade.MaxGroupNameLen:
		return fmt.Sprintf("the name has %d characters; a group name has at most %d", utf8.RuneCountInString(name), facade.MaxGroupNameLen)
	}
	for i, r := range name {
		if !unicode.IsGraphic(r) {
			return fmt.Sprintf("the name has the unprintable character %U at byte %d", r, i)
		}
	}
	return "not a group name"
}
