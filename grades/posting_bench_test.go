package grades

import (
	"fmt"
	"testing"
	"time"

	"github.com/facade-dev/facade"
)

// BenchmarkStudentReadPostingOnOff: a student's read of their grade
// (GetPosted, what GET answers them) when the class's posting is off
// (automatic), on (manual, with a change waiting), and on a record as the
// service stored it before posting existed (main's record, which an
// automatic class's grade still is: the same four fields), side by side
// in one run: the rounds alternate, each in turn first, so a load that
// comes and goes weighs on each alike. It
// reports each one's cost per read and the ratios (docs/performance.md,
// "Posting").
func BenchmarkStudentReadPostingOnOff(b *testing.B) {
	ctx := b.Context()
	now := t0
	s, rdb := newStore(b, &now)
	class := classes("english-101")
	ids := map[string]facade.StudentID{}
	for _, name := range []string{"auto", "manual", "before"} {
		ids[name], _ = facade.ParseStudentID(name)
	}
	if _, err := s.Create(ctx, ids["auto"], SubjectEnglish, Grade{"B"}, "bob", nil); err != nil {
		b.Fatal(err)
	}
	if _, err := s.Create(ctx, ids["manual"], SubjectEnglish, Grade{"B"}, "bob", nil); err != nil {
		b.Fatal(err)
	}
	if _, err := s.SetPolicy(ctx, class[0], Manual, nil, SubjectEnglish, "lena"); err != nil {
		b.Fatal(err)
	}
	if rec, err := s.Update(ctx, ids["manual"], SubjectEnglish, Grade{"A"}, "bob", nil, class); err != nil || rec.Posted {
		b.Fatal(rec, err)
	}
	rdb.HSet(ctx, recordKey("before", SubjectEnglish), "grade", "B", "version", "1", "updated_at", "2025-03-01T10:00:00Z", "updated_by", "bob")
	const perRound = 200
	spent := map[string]time.Duration{}
	reads := 0
	order := []string{"auto", "manual", "before"}
	for b.Loop() {
		order = append(order[1:], order[0]) // each goes first, second and third in turn
		for _, name := range order {
			start := time.Now()
			for range perRound {
				rec, err := s.GetPosted(ctx, ids[name], SubjectEnglish, class)
				if err != nil || rec.Grade != "B" {
					b.Fatal(rec, err)
				}
			}
			spent[name] += time.Since(start)
		}
		reads += perRound
	}
	per := func(name string) float64 { return float64(spent[name].Nanoseconds()) / float64(reads) }
	b.ReportMetric(per("auto"), "ns/read-off")
	b.ReportMetric(per("manual"), "ns/read-on")
	b.ReportMetric(per("before"), "ns/read-main")
	b.ReportMetric(per("manual")/per("auto"), "on/off")
	b.ReportMetric(per("auto")/per("before"), "off/main")
	b.Log(fmt.Sprintf("per read: posting off %.0f ns, on %.0f ns, main's record %.0f ns", per("auto"), per("manual"), per("before")))
}
