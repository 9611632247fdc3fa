package proxy

import (
	"bytes"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/facade-dev/facade"
)

// projectsIndex is the project list document taken apart once per
// version, with every piece already encoded (links rewritten to the
// placeholder), so that a principal's view is assembled by concatenation:
// no JSON encoding, no reflection, however many projects there are.
type projectsIndex struct {
	top      []byte // members of the top object other than "projects", comma-joined, e.g. "expand":"projects","link":{...}
	projects []indexedProject
}

type indexedProject struct {
	key   string
	ref   facade.ProjectKey // key parsed; zero when malformed (nobody may see it whole)
	head  []byte            // the project's members other than "plans", comma-joined, without braces
	plans []indexedPlan
}

type indexedPlan struct {
	key string         // the plan's own key (P of K-P)
	ref facade.PlanKey // K-P parsed, as authz wants it; zero under a malformed project key
	raw []byte         // the encoded plan object
}

// projectsIndexFrom takes the collected document apart (see
// fetchAllProjects), from its rewritten object. It is lenient below the
// top level: an item that is not an object, or a plan whose key cannot be
// told, is left out (a plan nobody can be authorized for must not be
// shown), rather than failing the whole list.
func projectsIndexFrom(top map[string]any) (any, error) {
	idx := &projectsIndex{}
	list, _ := top["projects"].(map[string]any)
	var err error
	if idx.top, err = encodeMembers(top, "projects"); err != nil {
		return nil, err
	}
	items, _ := list["project"].([]any)
	for _, item := range items {
		proj, ok := item.(map[string]any)
		if !ok {
			continue
		}
		ip, err := indexProject(proj)
		if err != nil {
			return nil, err
		}
		idx.projects = append(idx.projects, ip)
	}
	return idx, nil
}

func indexProject(proj map[string]any) (indexedProject, error) {
	ip := indexedProject{}
	ip.key, _ = proj["key"].(string)
	ip.ref, _ = facade.ParseProjectKey(ip.key)
	plansObj, _ := proj["plans"].(map[string]any)
	plans, _ := plansObj["plan"].([]any)
	for _, item := range plans {
		plan, ok := item.(map[string]any)
		if !ok {
			continue
		}
		key := planShortKey(ip.key, plan)
		if key == "" {
			continue
		}
		var buf bytes.Buffer
		if err := encodeJSON(&buf, plan); err != nil {
			return ip, err
		}
		ref, _ := ip.ref.Plan(key)
		ip.plans = append(ip.plans, indexedPlan{key: key, ref: ref, raw: buf.Bytes()})
	}
	var err error
	ip.head, err = encodeMembers(proj, "plans")
	return ip, err
}

// planShortKey is the plan's own key: "key" is "K-P"; "shortKey" is P.
func planShortKey(projectKey string, plan map[string]any) string {
	if full, ok := plan["key"].(string); ok {
		if short, ok := strings.CutPrefix(full, projectKey+"-"); ok && facade.ValidPlanKey(short) {
			return short
		}
	}
	if short, ok := plan["shortKey"].(string); ok && facade.ValidPlanKey(short) {
		return short
	}
	return ""
}

// encodeMembers writes the members of obj except skip, sorted by name,
// comma-joined, without the enclosing braces.
func encodeMembers(obj map[string]any, skip string) ([]byte, error) {
	var buf bytes.Buffer
	for _, name := range slices.Sorted(maps.Keys(obj)) {
		if name == skip {
			continue
		}
		if buf.Len() > 0 {
			buf.WriteByte(',')
		}
		if err := encodeJSON(&buf, name); err != nil {
			return nil, err
		}
		buf.WriteByte(':')
		if err := encodeJSON(&buf, obj[name]); err != nil {
			return nil, err
		}
	}
	return buf.Bytes(), nil
}

// render assembles one page of a principal's view, in Bamboo's shape:
// projects.size is the number of visible projects, start-index the page's
// first, max-result the number in the page (as Bamboo reports it). Each
// project's plans list holds only its visible plans, recounted; without
// the plans expansion it is collapsed to its paging numbers, as Bamboo
// sends it.
func (idx *projectsIndex) render(visible []visibleProject, withPlans bool, start, max int) []byte {
	from := min(start, len(visible))
	page := visible[from:min(from+max, len(visible))]

	var b bytes.Buffer
	b.Grow(idx.estimate(page, withPlans))
	b.WriteByte('{')
	if len(idx.top) > 0 {
		b.Write(idx.top)
		b.WriteByte(',')
	}
	b.WriteString(`"projects":{"size":`)
	b.WriteString(strconv.Itoa(len(visible)))
	b.WriteString(`,"expand":"project","start-index":`)
	b.WriteString(strconv.Itoa(from))
	b.WriteString(`,"max-result":`)
	b.WriteString(strconv.Itoa(len(page)))
	b.WriteString(`,"project":[`)
	for i, v := range page {
		if i > 0 {
			b.WriteByte(',')
		}
		idx.renderProject(&b, v, withPlans)
	}
	b.WriteString(`]}}`)
	return b.Bytes()
}

func (idx *projectsIndex) renderProject(b *bytes.Buffer, v visibleProject, withPlans bool) {
	proj := &idx.projects[v.project]
	n := len(v.plans)
	if v.plans == nil {
		n = len(proj.plans)
	}
	b.WriteByte('{')
	if len(proj.head) > 0 {
		b.Write(proj.head)
		b.WriteByte(',')
	}
	count := strconv.Itoa(n)
	b.WriteString(`"plans":{"size":`)
	b.WriteString(count)
	if withPlans {
		b.WriteString(`,"expand":"plan"`)
	}
	b.WriteString(`,"start-index":0,"max-result":`)
	b.WriteString(count)
	if withPlans {
		b.WriteString(`,"plan":[`)
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			j := i
			if v.plans != nil {
				j = int(v.plans[i])
			}
			b.Write(proj.plans[j].raw)
		}
		b.WriteByte(']')
	}
	b.WriteString(`}}`)
}

// estimate sizes the output buffer so a view is written without regrowth.
func (idx *projectsIndex) estimate(page []visibleProject, withPlans bool) int {
	n := len(idx.top) + 128
	for _, v := range page {
		proj := &idx.projects[v.project]
		n += len(proj.head) + 96
		if withPlans {
			for _, p := range proj.plans {
				n += len(p.raw) + 1
			}
		}
	}
	return n
}
