package authz

import (
	"strings"

	facade "github.com/facade-dev/facade"
	"github.com/facade-dev/facade/authz/compiled"
)

// Decide answers (p, obj, act) as the service's routes do, for the
// operator tools (package policytool: policy test, who, what, diff), so
// that they and the service give one answer: a grade (student:S, view or
// update) by the grade rules with p's roles, the token's and the
// policy's (grade); a plan's view by the plan or its whole project
// (plan); an account's and a project's questions as the routes ask them.
// A question no route asks (another action, another object) is casbin's
// question as the files answer it.
func (st *Loaded) Decide(p facade.Principal, obj, act string) bool {
	q := compiled.SubjectOf(p)
	switch {
	case strings.HasPrefix(obj, PrefixStudent) && (act == ActView || act == ActUpdate):
		id, err := facade.ParseStudentID(strings.TrimPrefix(obj, PrefixStudent))
		return err == nil && st.grade(p, id.String(), act)
	case strings.HasPrefix(obj, PrefixPlan) && act == ActView:
		if key, err := facade.ParsePlanKey(strings.TrimPrefix(obj, PrefixPlan)); err == nil {
			return st.plan(q, key)
		}
	}
	return st.enforce(q, obj, act)
}
