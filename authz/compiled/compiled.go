// Package compiled answers casbin's question Enforce(sub, obj, act) for one
// model.conf and policy.csv, exactly as stock casbin v2 answers it on the
// same files, fast at the sizes docs/contract.md §3 names
// (docs/performance.md) and without keeping anything per caller. It exists so that the service's
// decisions (package authz) and the operator's tools (package policytool)
// rest on one reading of casbin's files.
//
// It reads the files as casbin does (rules.go, modelcheck.go) and compiles
// them: a model of a recognized family (model.go: role hierarchies,
// resource groups, deny rules, wildcard objects) gets an index built at
// load (index.go, decide.go); any other valid model is decided by casbin's
// own Enforce (casbin.go). A subject's token groups are asked as the g
// lines "g, <sub>, group:<name>" (Subject, below). The compiled policy also
// says why it decided as it did (explain.go), what it grants (grants.go),
// and, when asked to, counts the lines each decision went through
// (count.go), which package grantusage writes to Redis: the counters sit
// beside the index's own data, where a decision can add to them without a
// look-up (docs/performance.md, usage-cost).
package compiled

import (
	"fmt"
	"slices"

	"github.com/casbin/casbin/v2/model"
	facade "github.com/facade-dev/facade"
)

// decider answers casbin's Enforce(sub, obj, act) for one compiled policy.
type decider interface {
	// enforceUsed is Enforce, counting the lines the decision used in u
	// (count.go); nil counts nothing.
	enforceUsed(q Subject, obj, act string, u *Uses) bool
	kind() string // DeciderIndex or DeciderCasbin
}

// The deciders, as policy check, /readyz and the metric name them.
const (
	DeciderIndex  = "index"  // the index built at load
	DeciderCasbin = "casbin" // casbin's own Enforce
)

// Policy is one compiled model and policy: immutable once built.
type Policy struct {
	Path   string      // policy.csv, as explanations cite its lines
	Model  model.Model // model.conf as casbin loaded it
	Rules  []Rule      // as casbin loads them (duplicates skipped), file order
	Family string      // the recognized family, or why casbin decides
	d      decider
}

// Compile builds the decider for rules (read by ParsePolicy, checked by
// CheckPatterns) under m: the index for a recognized model, casbin's own
// enforcer for any other valid one. The error is one for policyPath as a
// whole.
func Compile(policyPath string, m model.Model, rules []Rule) (*Policy, error) {
	p := &Policy{Path: policyPath, Model: m, Rules: rules}
	s, reason := recognize(m)
	if s == nil {
		d, err := newCasbinDecider(m, rules)
		if err != nil {
			return nil, fmt.Errorf("casbin could not load the policy: %w", err)
		}
		p.d, p.Family = d, reason
		return p, nil
	}
	x, err := newIndex(s, rules)
	if err != nil {
		return nil, err
	}
	p.d, p.Family = x, s.String()
	return p, nil
}

// Decider is DeciderIndex or DeciderCasbin: which path decides.
func (p *Policy) Decider() string { return p.d.kind() }

// Enforce is casbin's Enforce(q.ID, obj, act) with q's token groups as g
// lines; a nil Policy denies.
func (p *Policy) Enforce(q Subject, obj, act string) bool { return p.EnforceCounted(q, obj, act, nil) }

// EnforceCounted is Enforce, counting the lines the decision used in u
// (nil: none). Both run the same code and differ by the counting alone.
func (p *Policy) EnforceCounted(q Subject, obj, act string, u *Uses) bool {
	if p == nil || p.d == nil {
		return false
	}
	return p.d.enforceUsed(q, obj, act, u)
}

// Unguarded is p as a group's members get it: without the matcher's
// !regexMatch(r.sub, ...) guard, which keeps a token's sub from posing as a
// group (index only: casbin's Enforce always applies the whole model).
func (p *Policy) Unguarded() *Policy {
	x, ok := p.d.(*index)
	if !ok || x.shape.guard == nil {
		return p
	}
	q := *p
	q.d = x.unguarded()
	return &q
}

// GroupPrefix names the groups a principal carries in its token or
// sign-in: a principal with Groups ["devs"] is a member of group:devs.
const GroupPrefix = "group:"

// GroupRole is the role definition the token's memberships belong to:
// the decision is casbin's on the same files with "g, <sub>, group:<name>"
// added. A model without g has nowhere to put them, and they grant nothing.
const GroupRole = "g"

// Subject is who asks casbin's question: the principal's id and the
// groups it carries, as the policy names them (group:<name>), each valid
// and listed once.
type Subject struct {
	ID     string
	Groups []string
}

// SubjectOf is the subject of p's questions. A group name that is not
// facade.ValidGroupName (a control character, over 256 characters) is
// left out: it grants nothing. Every other name is group:<name> whole,
// compared whole with the policy's subjects: a name with commas is not a
// list, "acme:payments" is not group:acme, and a name with '*' is no
// pattern (the role definitions the service decides have no matching
// function).
func SubjectOf(p facade.Principal) Subject { return SubjectWith(p.ID, p.Groups) }

func SubjectWith(id string, names []string) Subject {
	s := Subject{ID: id}
	var seen map[string]bool // past a few names, a set: 200 Entra groups are not 20,000 compares
	if len(names) > 8 {
		seen = make(map[string]bool, len(names))
	}
	for _, n := range names {
		if !facade.ValidGroupName(n) {
			continue
		}
		g := GroupPrefix + n
		switch {
		case seen != nil && seen[g], seen == nil && slices.Contains(s.Groups, g):
			continue
		case seen != nil:
			seen[g] = true
		}
		s.Groups = append(s.Groups, g)
	}
	return s
}

// memberships are the policy lines casbin would need to decide as the
// service does for s: "g, <id>, group:<name>" per group.
func (s Subject) memberships() [][]string {
	rules := make([][]string, len(s.Groups))
	for i, g := range s.Groups {
		rules[i] = []string{s.ID, g}
	}
	return rules
}
