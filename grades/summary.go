package grades

// GradeCount is how many students have one grade of the scale.
type GradeCount struct {
	Grade string `json:"grade"`
	Count int    `json:"count"`
}

// Summary is a class at a glance (docs/contract.md §4): the count of each
// grade of the scale, best first, how many students are graded and
// enrolled, the median grade (nil with no grade) and how many grades
// wait for a post. Staff's view: current grades, posted or not.
type Summary struct {
	Enrolled int          `json:"enrolled"`
	Graded   int          `json:"graded"`
	Unposted int          `json:"unposted"`
	Median   *string      `json:"median"`
	Counts   []GradeCount `json:"counts"`
}

// Summarize counts recs, the grades of a class's enrolled students
// (those without a grade have none in recs).
//
// The median of an even count is the lower of the two middle grades
// (the one nearer F): a grade on a scale has no mean of two, and the
// lower one is the one at least half the class reached.
func Summarize(recs []Record, enrolled int) Summary {
	out := Summary{Enrolled: enrolled, Counts: make([]GradeCount, len(scale))}
	at := make(map[string]int, len(scale))
	for i, g := range scale {
		out.Counts[i].Grade = g
		at[g] = i
	}
	for _, r := range recs {
		i, ok := at[r.Grade]
		if !ok {
			continue // not on the scale: no parse stores one
		}
		out.Counts[i].Count++
		out.Graded++
		if !r.Posted {
			out.Unposted++
		}
	}
	if out.Graded > 0 {
		// Best first, the median is the grade at index Graded/2: the
		// middle one, or the lower of the two middle ones.
		k := out.Graded / 2
		for _, c := range out.Counts {
			if k < c.Count {
				g := c.Grade
				out.Median = &g
				break
			}
			k -= c.Count
		}
	}
	return out
}
