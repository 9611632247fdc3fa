package policytest

import (
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	facade "github.com/facade-dev/facade"
)

// AccountID is s parsed as the HTTP layer parses it; text it refuses is
// the zero AccountID, which names no account (and is allowed nothing).
func AccountID(s string) facade.AccountID {
	id, _ := facade.ParseAccountID(s)
	return id
}

// StudentID is s parsed as the HTTP layer parses it; text it refuses is
// the zero StudentID, which names no student (and is allowed nothing).
func StudentID(s string) facade.StudentID {
	id, _ := facade.ParseStudentID(s)
	return id
}

// ClassID is s parsed as the HTTP layer parses it; text it refuses is the
// zero ClassID, which names no class (and is allowed nothing).
func ClassID(s string) facade.ClassID {
	id, _ := facade.ParseClassID(s)
	return id
}

// ProjectKey is s parsed as the proxy parses a key; text it refuses is the
// zero ProjectKey, which names no project (and is allowed nothing).
func ProjectKey(s string) facade.ProjectKey {
	k, _ := facade.ParseProjectKey(s)
	return k
}

// PlanKey is project-plan parsed as the proxy parses a key; text it
// refuses is the zero PlanKey, which names no plan (and is allowed nothing).
func PlanKey(project, plan string) facade.PlanKey {
	k, _ := facade.ParsePlanKey(project + "-" + plan)
	return k
}

// CounterValue reads a counter or gauge.
func CounterValue(c prometheus.Metric) float64 {
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		panic(err)
	}
	if m.Counter != nil {
		return m.Counter.GetValue()
	}
	return m.Gauge.GetValue()
}
