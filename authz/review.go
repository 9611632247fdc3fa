package authz

import (
	"fmt"
	"strings"
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
	oldLines, newLines := old.lineSet(), new.lineSet()
	r := &PolicyReview{}
	for _, g := range after {
		if !had[grantKey{g.Subject, g.Object, g.Action}] {
			r.Gained = append(r.Gained, new.access(g, oldLines, len(r.Gained) < maxExplained))
		}
	}
	for _, g := range before {
		if !has[grantKey{g.Subject, g.Object, g.Action}] {
			a := old.access(g, newLines, len(r.Lost) < maxExplained)
			if g.Kind == "principal" && len(r.Lost) < maxExplained {
				if x := new.explain(subject{id: g.Subject}, g.Object, g.Action); !x.Allow && x.Rule != "" {
					a.Denied = x.Rule
				}
			}
			r.Lost = append(r.Lost, a)
		}
	}
	deadBefore := map[string]bool{}
	for _, l := range old.deadLines() {
		deadBefore[normalLine(old.st.rules[l])] = true
	}
	for _, l := range new.deadLines() {
		if !deadBefore[normalLine(new.st.rules[l])] {
			r.NowUnused = append(r.NowUnused, new.st.rules[l].cite(new.policyPath))
		}
	}
	return r, nil
}

// lineSet is the policy's lines by normalLine.
func (p *Policy) lineSet() map[string]bool {
	out := make(map[string]bool, len(p.st.rules))
	for _, r := range p.st.rules {
		out[normalLine(r)] = true
	}
	return out
}

// access is g with the lines that grant it; other is the other file's
// lines, to mark those the change adds or removes.
func (p *Policy) access(g Grant, other map[string]bool, explain bool) Access {
	a := Access{Subject: g.Subject, Kind: g.Kind, Object: g.Object, Action: g.Action}
	lines := g.GrantedBy
	if explain {
		if x := p.explainAsMember(g); x.Allow && x.Rule != "" {
			lines = append(append([]string(nil), x.Chain...), x.Rule)
		}
	}
	texts := p.citedTexts()
	for _, l := range lines {
		a.Lines = append(a.Lines, l)
		a.Changed = append(a.Changed, !other[texts[l]])
	}
	return a
}

// explainAsMember explains g's grant, a group's as its members get it
// (without the matcher's colon guard, as Report lists it).
func (p *Policy) explainAsMember(g Grant) Explanation {
	x, ok := p.st.decider.(*index)
	if !ok || g.Kind == "anyone" {
		return Explanation{}
	}
	if g.Kind == "group" && x.shape.guard != nil {
		s := *x.shape
		s.guard = nil
		y := *x
		y.shape = &s
		x = &y
	}
	return p.explainIndex(x, subject{id: g.Subject}, g.Object, g.Action)
}

// citedTexts maps each line's citation to its normalLine.
func (p *Policy) citedTexts() map[string]string {
	if p.cited == nil {
		p.cited = make(map[string]string, len(p.st.rules))
		for _, r := range p.st.rules {
			p.cited[r.cite(p.policyPath)] = normalLine(r)
		}
	}
	return p.cited
}

// deadLines are the indexes of the lines that can take part in no
// decision: an allow line whose grant deny lines take back entirely
// (index models), and a g line whose group reaches, within casbin's
// depth, no name a p line names (nor a role:R the grade rules read).
func (p *Policy) deadLines() []int {
	matters := map[string]bool{}
	links := map[string][][2]string{}
	for _, r := range p.st.rules {
		switch {
		case r.ptype == "p" && len(r.fields) >= 2:
			matters[r.fields[0]], matters[r.fields[1]] = true, true
		case strings.HasPrefix(r.ptype, "g") && len(r.fields) >= 2:
			links[r.ptype] = append(links[r.ptype], [2]string{r.fields[0], r.fields[1]})
		}
	}
	reaches := map[string]map[string][]string{}
	for role, l := range links {
		reaches[role] = buildClosures(l, matters)
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
	for i, r := range p.st.rules {
		switch {
		case r.line == 0:
		case r.ptype == "p":
			if _, ok := p.st.decider.(*index); ok && (len(r.fields) < 4 || r.fields[3] != "deny") && !granting[r.cite(p.policyPath)] {
				dead = append(dead, i)
			}
		case len(r.fields) >= 2:
			to := r.fields[1]
			if !matters[to] && len(reaches[r.ptype][to]) == 0 && !strings.HasPrefix(to, prefixRole) {
				dead = append(dead, i)
			}
		}
	}
	return dead
}

// Markdown writes the review as a pull-request comment.
func (r *PolicyReview) Markdown(title string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### %s\n\n", title)
	if len(r.Gained)+len(r.Lost) == 0 {
		b.WriteString("No access changes: every (subject, object, action) granted before is granted after, and nothing more.\n")
	} else {
		fmt.Fprintf(&b, "**%d gained, %d lost** (subject, object, action; a group's members each have their own row). "+
			"Lines in **bold** are the ones this change adds (gained) or removes (lost).\n", len(r.Gained), len(r.Lost))
	}
	section := func(name string, rows []Access) {
		if len(rows) == 0 {
			return
		}
		fmt.Fprintf(&b, "\n#### %s (%d)\n\n| subject | object | action | because of |\n|---|---|---|---|\n", name, len(rows))
		for i, a := range rows {
			if i == maxExplained {
				fmt.Fprintf(&b, "\n… and %d more (run `facade policy diff` for every decision).\n", len(rows)-maxExplained)
				break
			}
			var cells []string
			for j, l := range a.Lines {
				c := mdCode(l)
				if a.Changed[j] {
					c = "**" + c + "**"
				}
				cells = append(cells, c)
			}
			if a.Denied != "" {
				cells = append(cells, "taken back by "+mdCode(a.Denied))
			}
			fmt.Fprintf(&b, "| %s (%s) | %s | %s | %s |\n", mdCell(a.Subject), a.Kind, mdCell(a.Object), mdCell(a.Action), strings.Join(cells, "<br>"))
		}
	}
	section("Gained", r.Gained)
	section("Lost", r.Lost)
	if len(r.NowUnused) > 0 {
		fmt.Fprintf(&b, "\n#### Lines that now grant nothing (%d)\n\nNo decision can go through them after this change: remove them, or fix what they were meant to reach.\n\n", len(r.NowUnused))
		for _, l := range r.NowUnused {
			fmt.Fprintf(&b, "- %s\n", mdCode(l))
		}
	}
	return b.String()
}

// mdCell escapes a table cell's text.
func mdCell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "<", "&lt;", "*", `\*`, "_", `\_`, "`", "\\`").Replace(s)
}

// mdCode writes s as inline code in a table cell: a backtick fence longer
// than any run of backticks in s, and | escaped (GitHub splits cells on
// it even inside code).
func mdCode(s string) string {
	s = strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}
