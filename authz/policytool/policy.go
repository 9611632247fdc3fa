// Package policytool answers what ops ask about a model and a policy
// before and after it ships (`facade policy ...`, docs/policy.md): why a
// question gets its answer, whether a file of expected decisions holds,
// who may do what, which decisions a change moves, every grant (the access
// review) and each line's use. It is apart from package authz so that the
// service carries none of it on its decision path; it loads the files as
// the service does (authz.Load) and asks the same compiled policy (package
// compiled), so its answers are the service's.
package policytool

import (
	"slices"
	"strings"

	facade "github.com/facade-dev/facade"
	"github.com/facade-dev/facade/authz"
	"github.com/facade-dev/facade/authz/compiled"
	"github.com/facade-dev/facade/authz/grantusage"
)

// Policy is a model and policy loaded for the operator tools: the same
// decisions as a serving Authorizer, plus the questions ops ask.
type Policy struct {
	loaded   *authz.Loaded
	pol      *compiled.Policy
	Problems []compiled.Problem // warnings found while loading
	usage    *grantusage.Usage  // AttachUsage
}

// Open loads modelPath and policyPath as the service does; files with
// refusing problems are an error naming the first (file:line).
func Open(modelPath, policyPath string) (*Policy, error) {
	l, problems, err := authz.Load(modelPath, policyPath)
	if err != nil {
		return nil, err
	}
	return &Policy{loaded: l, pol: l.Compiled(), Problems: problems}, nil
}

// Decider is "index" when the service decides the model with its own index,
// "casbin" when casbin's Enforce does.
func (p *Policy) Decider() string { return p.pol.Decider() }

// Family names the recognized model family, or why casbin decides.
func (p *Policy) Family() string { return p.pol.Family }

// Hash is the content hash /readyz and the metric show for these files.
func (p *Policy) Hash() string { return p.loaded.Hash() }

// Enforce is casbin's Enforce(sub, obj, act) on these files.
func (p *Policy) Enforce(sub, obj, act string) bool {
	return p.pol.Enforce(compiled.Subject{ID: sub}, obj, act)
}

// Decide answers (pr, obj, act) as the service does (authz's Decide: the
// grade rules with pr's roles, the token's and the policy's; a plan by its
// project too; groups; wildcards): what test, who, what and diff ask.
func (p *Policy) Decide(pr facade.Principal, obj, act string) bool {
	return p.loaded.Decide(pr, obj, act)
}

// Roles are pr's roles under this policy: its token's and those the
// policy gives it, sorted (as the service shows them on /auth/me).
func (p *Policy) Roles(pr facade.Principal) []string { return p.loaded.Roles(pr) }

// names returns every name the policy mentions as a p subject or in g
// lines (principals and groups), and every p object, g name with a known
// object prefix, and p action.
func (p *Policy) names() (subjects, objects, actions []string) {
	for _, r := range p.pol.Rules {
		if len(r.Fields) < 2 {
			continue
		}
		if r.Type == "p" {
			subjects = append(subjects, r.Fields[0])
			objects = append(objects, r.Fields[1])
			if len(r.Fields) > 2 {
				actions = append(actions, r.Fields[2])
			}
			continue
		}
		for _, n := range r.Fields[:2] {
			if _, ok := authz.ObjectKind(n); ok && !strings.ContainsAny(n, "*?[{") {
				objects = append(objects, n)
			} else {
				subjects = append(subjects, n)
			}
		}
	}
	return sortedSet(subjects), sortedSet(objects), sortedSet(actions)
}

// asGroup decides (name, obj, act) for a group name as its members get it:
// the colon guard, which keeps a token from posing as a group, is not
// applied (index only; casbin's Enforce always applies the model).
func (p *Policy) asGroup(name, obj, act string) bool {
	return p.pol.Unguarded().Enforce(compiled.Subject{ID: name}, obj, act)
}

// groupMay is asGroup as the service decides for the group's members: a
// plan's view is also granted by view on its whole project.
func (p *Policy) groupMay(name, obj, act string) bool {
	if p.asGroup(name, obj, act) {
		return true
	}
	if key, err := facade.ParsePlanKey(strings.TrimPrefix(obj, authz.PrefixPlan)); err == nil && act == authz.ActView && strings.HasPrefix(obj, authz.PrefixPlan) {
		return p.asGroup(name, authz.PrefixProject+key.Project().String(), act)
	}
	return false
}

// Who returns every principal and every group that may act on obj
// (principals: names without a colon, as a token sub would be), each
// principal asked as the service decides for a token carrying tokenGroups
// (group names) and roles (Decide).
func (p *Policy) Who(obj, act string, tokenGroups, roles []string) (principals, groups []string) {
	subjects, _, _ := p.names()
	for _, s := range subjects {
		if strings.Contains(s, ":") {
			if p.groupMay(s, obj, act) {
				groups = append(groups, s)
			}
		} else if p.Decide(principalWith(s, tokenGroups, roles), obj, act) {
			principals = append(principals, s)
		}
	}
	return principals, groups
}

// principalWith is the principal id whose token carries groups and roles.
func principalWith(id string, groups, roles []string) facade.Principal {
	pr := facade.Principal{ID: id, Groups: groups}
	if len(roles) > 0 {
		pr.Role = roles[0]
	}
	if len(roles) > 1 {
		pr.Roles = roles
	}
	return pr
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
			if p.mayDo(pr, o, a) {
				out = append(out, o+" "+a)
			}
		}
	}
	return out
}

// mayDo is What's question: a group's as its members get it, a
// principal's as the service decides it (Decide).
func (p *Policy) mayDo(pr facade.Principal, obj, act string) bool {
	if strings.Contains(pr.ID, ":") && len(pr.Groups) == 0 {
		return p.groupMay(pr.ID, obj, act)
	}
	return p.Decide(pr, obj, act)
}

// asGroupOrPrincipal is casbin's question for pr (a group as its members
// get it), as the access review (Report) lists grants.
func (p *Policy) asGroupOrPrincipal(pr facade.Principal, obj, act string) bool {
	if strings.Contains(pr.ID, ":") && len(pr.Groups) == 0 {
		return p.asGroup(pr.ID, obj, act)
	}
	return p.pol.Enforce(compiled.SubjectOf(pr), obj, act)
}

// sortedSet is s sorted, each value once.
func sortedSet(s []string) []string {
	slices.Sort(s)
	return slices.Compact(s)
}
