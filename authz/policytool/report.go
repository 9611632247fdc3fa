package policytool

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/facade-dev/facade/authz/compiled"
)

// Grant is one row of the access review (`facade policy report`): Subject
// may do Action on Object, by the policy lines in GrantedBy.
type Grant struct {
	Subject string `json:"subject"`
	Kind    string `json:"kind"`   // principal, group, or anyone (a line the matcher matches for every subject)
	Object  string `json:"object"` // an object, or a wildcard as the line writes it
	Action  string `json:"action"` // an action, or a literal the matcher names ("*")
	// GrantedBy cites each p line that grants it ("file:line: text"),
	// directly or through the subject's groups and the object's groups.
	GrantedBy []string `json:"granted_by"`
	// Except cites the deny lines that take part of a wildcard grant back
	// (objects it covers, or patterns that may overlap it).
	Except []string `json:"except,omitempty"`
	// LastUsed is the latest use of a line in GrantedBy (by anyone the
	// line grants), when the report was made with usage (AttachUsage).
	LastUsed *time.Time `json:"last_used"`
}

// maxReportQuestions bounds a report on a model casbin decides, which asks
// every subject x object x action.
const maxReportQuestions = 20_000_000

// Report lists every subject (principal or group) x object x action the
// files grant, sorted, for one subject when subject is not empty. A group
// is reported as its members get it. On a model the index decides, the
// index lists them (compiled.Policy.Grants), at a cost that follows the
// size of the answer; on another model every question over the names the
// policy mentions is asked of casbin.
func (p *Policy) Report(subject string) ([]Grant, error) {
	var grants []Grant
	if found, ok := p.pol.Grants(subject); ok {
		keys := map[int]string{}
		grants = make([]Grant, 0, len(found))
		for _, g := range found {
			grants = append(grants, Grant{Subject: g.Subject, Kind: g.Kind, Object: g.Object, Action: g.Action,
				GrantedBy: g.GrantedBy, Except: g.Except, LastUsed: p.lastUsed(g.Rules, keys)})
		}
	} else {
		var err error
		if grants, err = p.reportCasbin(subject); err != nil {
			return nil, err
		}
	}
	slices.SortFunc(grants, func(a, b Grant) int {
		return cmp.Or(cmp.Compare(a.Subject, b.Subject), cmp.Compare(a.Object, b.Object), cmp.Compare(a.Action, b.Action))
	})
	return grants, nil
}

// reportCasbin asks casbin every question over the names the policy
// mentions (a group as its members get it); the granting line is the one
// casbin's EnforceEx names.
func (p *Policy) reportCasbin(only string) ([]Grant, error) {
	subjects, objects, actions := p.names()
	if only != "" {
		subjects = []string{only}
	}
	if n := len(subjects) * len(objects) * len(actions); n > maxReportQuestions {
		return nil, fmt.Errorf("authz: %d questions to ask casbin (over %d): the model is not one the index decides", n, maxReportQuestions)
	}
	ruleAt := make(map[string]int, len(p.pol.Rules)) // a line's citation -> its index, for its last use
	for i, r := range p.pol.Rules {
		ruleAt[r.Cite(p.pol.Path)] = i
	}
	var grants []Grant
	keys := map[int]string{}
	for _, s := range subjects {
		kind := "principal"
		if strings.Contains(s, ":") {
			kind = "group"
		}
		for _, o := range objects {
			for _, a := range actions {
				x := p.pol.Explain(compiled.Subject{ID: s}, o, a)
				if !x.Allow {
					continue
				}
				g := Grant{Subject: s, Kind: kind, Object: o, Action: a}
				if x.Rule != "" {
					i, ok := ruleAt[x.Rule]
					if !ok {
						i = -1
					}
					g.GrantedBy = []string{x.Rule}
					g.LastUsed = p.lastUsed([]int{i}, keys)
				}
				grants = append(grants, g)
			}
		}
	}
	return grants, nil
}
