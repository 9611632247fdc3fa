package policytool

import (
	"cmp"
	"slices"
	"time"

	"github.com/facade-dev/facade/authz/compiled"
	"github.com/facade-dev/facade/authz/grantusage"
)

// LineUse is one policy line in `facade policy usage`: its uses in the
// window and its last use.
type LineUse struct {
	File string `json:"file"`
	Line int    `json:"line"`
	Text string `json:"text"` // as written
	Uses uint64 `json:"uses"` // allow decisions it took part in (deny lines: denials it decided) in the window
	// LastUsed is the line's last use Redis knows of (up to 400 days
	// back, within a flush interval), even before the window; nil when
	// none. Uses == 0 is what makes a line unused in the window.
	LastUsed *time.Time `json:"last_used"`
}

// AttachUsage makes Report's rows carry last_used from u.
func (p *Policy) AttachUsage(u *grantusage.Usage) { p.usage = u }

// LinesUsed lists every p and g line with its use in u: the lines unused
// in the window first, in file order, then the others, fewest uses first.
func (p *Policy) LinesUsed(u *grantusage.Usage) []LineUse {
	out := make([]LineUse, 0, len(p.pol.Rules))
	for _, r := range p.pol.Rules {
		if r.Line == 0 {
			continue
		}
		key := compiled.NormalLine(r)
		lu := LineUse{File: p.pol.Path, Line: r.Line, Text: r.Text, Uses: u.Uses[key]}
		if t, ok := u.Last[key]; ok {
			lu.LastUsed = &t
		}
		out = append(out, lu)
	}
	slices.SortStableFunc(out, func(a, b LineUse) int {
		if (a.Uses == 0) != (b.Uses == 0) {
			if a.Uses == 0 {
				return -1
			}
			return 1
		}
		if a.Uses == 0 {
			return cmp.Compare(a.Line, b.Line)
		}
		return cmp.Or(cmp.Compare(a.Uses, b.Uses), cmp.Compare(a.Line, b.Line))
	})
	return out
}

// lastUsed is the latest last use of the rules (indexes into the
// compiled policy's rules; keys caches their NormalLine), when usage is
// attached.
func (p *Policy) lastUsed(rules []int, keys map[int]string) *time.Time {
	if p.usage == nil {
		return nil
	}
	var latest *time.Time
	for _, i := range rules {
		if i < 0 || i >= len(p.pol.Rules) {
			continue
		}
		k, ok := keys[i]
		if !ok {
			k = compiled.NormalLine(p.pol.Rules[i])
			keys[i] = k
		}
		if t, ok := p.usage.Last[k]; ok && (latest == nil || t.After(*latest)) {
			latest = &t
		}
	}
	return latest
}
