package bambootest

import (
	"fmt"
	"slices"
	"strconv"
)

// A Bamboo at a real organization's size and pace: hundreds of projects of
// ten plans each, and builds that start, run, write their logs and finish
// while people watch. Tests and benchmarks build one with Organization
// and move its builds with StartBuild, SetQueued, AppendLog and Finish.

// OrgProjectKey and OrgPlanKey are the keys Organization gives project i
// (from 0) and plan j of it: "S007", "S007-P3".
func OrgProjectKey(i int) string { return fmt.Sprintf("S%03d", i) }

// OrgPlanKey is the full key of plan j of project i.
func OrgPlanKey(i, j int) string { return OrgProjectKey(i) + "-P" + strconv.Itoa(j) }

// OrgPlanName is the plan's name: "Service 7-3".
func OrgPlanName(i, j int) string { return fmt.Sprintf("Service %d-%d", i, j) }

// OrgLatestState is the state of the latest build of plan j of project i:
// about one plan in seven failed last, spread over every project so that a
// reader who sees only the first page of results sees few of them.
func OrgLatestState(i, j int) string {
	if (i*10+j)%7 == 3 {
		return "Failed"
	}
	return "Successful"
}

// orgBuilds is how many finished builds Organization gives each plan.
const orgBuilds = 2

// Organization adds projects × plansPerProject plans ("Services 7" holds
// "Service 7-0" ... ), each with two finished builds, the latest in
// OrgLatestState. Build numbers differ per plan (10+j, 11+j), so a result
// shown against the wrong plan is noticed.
func Organization(srv *Server, projects, plansPerProject int) {
	s := srv.store
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range projects {
		proj := s.projectLocked(OrgProjectKey(i))
		proj.name, proj.description = fmt.Sprintf("Services %d", i), ""
		for j := range plansPerProject {
			p := s.planLocked(proj.key, "P"+strconv.Itoa(j))
			p.name = OrgPlanName(i, j)
			for n := range orgBuilds {
				state := "Successful"
				if n == orgBuilds-1 {
					state = OrgLatestState(i, j)
				}
				s.addResultLocked(p, 10+j+n, state, lifeCycleFinished)
			}
		}
	}
}

// addResultLocked adds build number of p, newest first.
func (s *store) addResultLocked(p *plan, number int, state, lifeCycle string) *result {
	s.nextID++
	r := &result{plan: p, number: number, state: state, id: s.nextID, lifeCycle: lifeCycle}
	p.results = slices.DeleteFunc(p.results, func(old *result) bool { return old.number == number })
	p.results = append(p.results, r)
	slices.SortFunc(p.results, func(a, b *result) int { return b.number - a.number })
	return r
}

// Life-cycle states of a build that has not finished (Bamboo's
// lifeCycleState).
const (
	LifeCycleQueued     = "Queued"
	LifeCycleInProgress = lifeCycleInProgress
	LifeCycleFinished   = lifeCycleFinished
)

// StartBuild starts the next build of plan "PROJ-PLAN", which must exist:
// a result one past the newest, in progress (state Unknown), with an
// empty log for job JOB1 that AppendLog grows. It returns the result key.
func (s *Builds) StartBuild(planKey string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.findPlanLocked(planKey)
	if p == nil {
		panic("bambootest: no plan " + strconv.Quote(planKey))
	}
	number := 1
	if len(p.results) > 0 {
		number = p.results[0].number + 1
	}
	r := s.addResultLocked(p, number, "Unknown", lifeCycleInProgress)
	r.artifacts = []Artifact{BuildLog(defaultJob, []byte{})}
	return r.key()
}

// SetQueued marks the result "PROJ-PLAN-N" as waiting for an agent.
func (s *Builds) SetQueued(resultKey string) {
	s.setResult(resultKey, func(r *result) { r.lifeCycle, r.state = LifeCycleQueued, "Unknown" })
}

// Finish ends the result "PROJ-PLAN-N" with state "Successful" or
// "Failed": from then on it is the plan's latest and never changes.
func (s *Builds) Finish(resultKey, state string) {
	s.setResult(resultKey, func(r *result) { r.lifeCycle, r.state = lifeCycleFinished, state })
}

// AppendLog appends text to the build log of job (a short key, "JOB1") of
// the result "PROJ-PLAN-N", as a running job writes it. Content already
// handed out is never modified: the log gets a new slice.
func (s *Builds) AppendLog(resultKey, job, text string) {
	s.setResult(resultKey, func(r *result) {
		for i, a := range r.artifacts {
			if a.isBuildLog() && a.ProducerJobKey == job {
				r.artifacts[i].Content = append(slices.Clip(a.Content), text...)
				return
			}
		}
		r.artifacts = append(r.artifacts, BuildLog(job, []byte(text)))
	})
}
