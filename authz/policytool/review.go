package policytool

import (
	"strings"

	"github.com/facade-dev/facade/authz"
	"github.com/facade-dev/facade/authz/compiled"
)

// PolicyReview is what a policy change does to access (`facade policy
// diff --format markdown`): the (subject, object, action) triples gained
// and lost, a group's members each with their own row, each with the
// lines that cause it, and the lines the change leaves granting nothing.
type PolicyReview struct {
	Gained, Lost []Access
	NowUnused    []string // "file:line: text" of lines in the new file that grant nothing
}

// Access is one triple a change gains or loses.
type Access struct {
	Subject, Kind, Object, Action string
	// Lines cite the lines that grant it, in the new file (gained) or the
	// old (lost), with the g lines on the way for a principal; a line the
	// change adds or removes is marked in Changed.
	Lines   []string
	Changed []bool
	// Denied cites, for a lost triple the new file still grants but a
	// deny line takes back, that deny line.
	Denied string
}

// maxExplained is how many triples per section get their g lines cited:
// each costs a walk of the group graph, and a comment longer than a few
// hundred rows is not read anyway.
const maxExplained = 200

// Review compares the access review of two policies (Report on each).
func Review(old, new *Policy) (*PolicyReview, error) {
	before, err := old.Report("")
	if err != nil {
		return nil, err
	}
	after, err := new.Report("")
	if err != nil {
		return nil, err
	}
	had := make(map[grantKey]bool, len(before))
	for _, g := range before {
		had[grantKey{g.Subject, g.Object, g.Action}] = true
	}
	has := make(map[grantKey]bool, len(after))
	for _, g := range after {
		has[grantKey{g.Subject, g.Object, g.Action}] = true
	}
	was, is := &side{p: old}, &side{p: new}
	oldLines, newLines := was.lineSet(), is.lineSet()
	r := &PolicyReview{}
	for _, g := range after {
		if !had[grantKey{g.Subject, g.Object, g.Action}] {
			r.Gained = append(r.Gained, is.access(g, oldLines, len(r.Gained) < maxExplained))
		}
	}
	for _, g := range before {
		if !has[grantKey{g.Subject, g.Object, g.Action}] {
			a := was.access(g, newLines, len(r.Lost) < maxExplained)
			if g.Kind == "principal" && len(r.Lost) < maxExplained {
				if x := new.pol.Explain(compiled.Subject{ID: g.Subject}, g.Object, g.Action); !x.Allow && x.Rule != "" {
					a.Denied = x.Rule
				}
			}
			r.Lost = append(r.Lost, a)
		}
	}
	deadBefore := map[string]bool{}
	for _, l := range was.deadLines() {
		deadBefore[compiled.NormalLine(old.pol.Rules[l])] = true
	}
	for _, l := range is.deadLines() {
		if !deadBefore[compiled.NormalLine(new.pol.Rules[l])] {
			r.NowUnused = append(r.NowUnused, new.pol.Rules[l].Cite(new.pol.Path))
		}
	}
	return r, nil
}

// grantKey is a Grant's (subject, object, action).
type grantKey struct{ sub, obj, act string }

// side is one of the two policies a review compares, with its lines by
// citation (access), found once per review.
type side struct {
	p     *Policy
	cited map[string]string
}

// lineSet is the policy's lines by NormalLine.
func (s *side) lineSet() map[string]bool {
	out := make(map[string]bool, len(s.p.pol.Rules))
	for _, r := range s.p.pol.Rules {
		out[compiled.NormalLine(r)] = true
	}
	return out
}

// access is g with the lines that grant it; other is the other file's
// lines, to mark those the change adds or removes.
func (s *side) access(g Grant, other map[string]bool, explain bool) Access {
	a := Access{Subject: g.Subject, Kind: g.Kind, Object: g.Object, Action: g.Action}
	lines := g.GrantedBy
	if explain {
		if x := s.explainAsMember(g); x.Allow && x.Rule != "" {
			lines = append(append([]string(nil), x.Chain...), x.Rule)
		}
	}
	texts := s.citedTexts()
	for _, l := range lines {
		a.Lines = append(a.Lines, l)
		a.Changed = append(a.Changed, !other[texts[l]])
	}
	return a
}

// explainAsMember explains g's grant, a group's as its members get it
// (without the matcher's colon guard, as Report lists it).
func (s *side) explainAsMember(g Grant) compiled.Explanation {
	pol := s.p.pol
	if pol.Decider() != compiled.DeciderIndex || g.Kind == "anyone" {
		return compiled.Explanation{}
	}
	if g.Kind == "group" {
		pol = pol.Unguarded()
	}
	return pol.Explain(compiled.Subject{ID: g.Subject}, g.Object, g.Action)
}

// citedTexts maps each line's citation to its NormalLine.
func (s *side) citedTexts() map[string]string {
	if s.cited == nil {
		s.cited = make(map[string]string, len(s.p.pol.Rules))
		for _, r := range s.p.pol.Rules {
			s.cited[r.Cite(s.p.pol.Path)] = compiled.NormalLine(r)
		}
	}
	return s.cited
}

// deadLines are the indexes of the lines that can take part in no
// decision: an allow line whose grant deny lines take back entirely
// (index models), and a g line whose group reaches, within casbin's
// depth, no name a p line names (nor a role:R the grade rules read).
func (s *side) deadLines() []int {
	p := s.p
	matters := map[string]bool{}
	links := map[string][][2]string{}
	for _, r := range p.pol.Rules {
		switch {
		case r.Type == "p" && len(r.Fields) >= 2:
			matters[r.Fields[0]], matters[r.Fields[1]] = true, true
		case strings.HasPrefix(r.Type, "g") && len(r.Fields) >= 2:
			links[r.Type] = append(links[r.Type], [2]string{r.Fields[0], r.Fields[1]})
		}
	}
	reaches := map[string]map[string][]string{}
	for role, l := range links {
		reaches[role] = compiled.Closures(l, matters)
	}
	granting := map[string]bool{}
	if grants, err := p.Report(""); err == nil {
		for _, g := range grants {
			for _, c := range g.GrantedBy {
				granting[c] = true
			}
		}
	}
	var dead []int
	for i, r := range p.pol.Rules {
		switch {
		case r.Line == 0:
		case r.Type == "p":
			if p.pol.Decider() == compiled.DeciderIndex && (len(r.Fields) < 4 || r.Fields[3] != "deny") && !granting[r.Cite(p.pol.Path)] {
				dead = append(dead, i)
			}
		case len(r.Fields) >= 2:
			to := r.Fields[1]
			if !matters[to] && len(reaches[r.Type][to]) == 0 && !strings.HasPrefix(to, authz.PrefixRole) {
				dead = append(dead, i)
			}
		}
	}
	return dead
}
