package policytool

import (
	"fmt"
	"strings"
)

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
