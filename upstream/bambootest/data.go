package bambootest

import (
	"bytes"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"
)

// BuildLogName is the name Bamboo gives a job's log in artifact lists.
const BuildLogName = "Build log"

// defaultJob is the job key used when an Artifact names none.
const defaultJob = "JOB1"

// Artifact is one artifact of a build result.
//
// The zero value is an empty, unshared file produced by job JOB1 and named
// "" (give it a Name). Content must not be modified once added.
type Artifact struct {
	// Name is the artifact's name in lists and the file name served.
	// BuildLogName makes it the job's build log (see BuildLog).
	Name string
	// ProducerJobKey is the short key of the job that produced it ("JAR");
	// documents show the job result key PROJ-PLAN-JAR-N. A full job result
	// key is accepted too. Default "JOB1".
	ProducerJobKey string
	// Shared artifacts are linked under .../artifact/shared/...
	Shared bool
	// Content is served verbatim when not nil.
	Content []byte
	// Size, when Content is nil, is the length of a file generated on the
	// fly from GeneratedContent, never held in memory (use it for large files).
	Size int64
	// ContentType defaults from the name's extension, else application/octet-stream.
	ContentType string
	// Directory makes the artifact a directory, as Bamboo stores copy
	// patterns that match several files: its link (ending in "/") answers
	// Bamboo's HTML listing page, and the file is served below it by Name.
	Directory bool
}

// BuildLog returns the build log of job, with content (nil: a few generated lines).
func BuildLog(job string, content []byte) Artifact {
	return Artifact{Name: BuildLogName, ProducerJobKey: job, Content: content}
}

func (a Artifact) isBuildLog() bool { return a.Name == BuildLogName }

func (a Artifact) size() int64 {
	if a.Content != nil {
		return int64(len(a.Content))
	}
	return a.Size
}

func (a Artifact) contentType() string {
	if a.ContentType != "" {
		return a.ContentType
	}
	if a.isBuildLog() {
		return "text/plain; charset=utf-8"
	}
	types := map[string]string{
		".jar": "application/java-archive", ".zip": "application/zip",
		".gz": "application/gzip", ".xml": "application/xml",
		".json": "application/json", ".html": "text/html; charset=utf-8",
		".txt": "text/plain; charset=utf-8", ".log": "text/plain; charset=utf-8",
	}
	if t, ok := types[strings.ToLower(path.Ext(a.Name))]; ok {
		return t
	}
	return "application/octet-stream"
}

// urlName is the artifact's name as Bamboo writes it in /browse links:
// spaces become hyphens.
func (a Artifact) urlName() string { return strings.ReplaceAll(a.Name, " ", "-") }

// open returns the artifact's bytes as a ReadSeeker (for Range support).
func (a Artifact) open(r *result) io.ReadSeeker {
	switch {
	case a.Content != nil:
		return bytes.NewReader(a.Content)
	case a.isBuildLog() && a.Size == 0:
		return bytes.NewReader(generatedLog(r, a.ProducerJobKey))
	}
	return GeneratedContent(a.Size)
}

func generatedLog(r *result, job string) []byte {
	var b bytes.Buffer
	key := r.key()
	for i, step := range []string{"Checking out source", "Resolving dependencies", "Compiling", "Running tests", "Publishing artifacts"} {
		fmt.Fprintf(&b, "build\t01-Mar-2025 09:%02d:%02d\t%s job %s: %s\n", i, i*7, key, job, step)
	}
	fmt.Fprintf(&b, "simple\t01-Mar-2025 09:05:00\tFinished task with result: %s\n", r.state)
	return b.Bytes()
}

// normaliseJob reduces a job key given in any form to its short key.
func normaliseJob(planKey string, number int, job string) string {
	job = strings.TrimPrefix(job, planKey+"-")
	job = strings.TrimSuffix(job, "-"+strconv.Itoa(number))
	if job == "" || strings.Contains(job, "-") {
		return defaultJob
	}
	return job
}

type project struct {
	key, name, description string
	plans                  []*plan // master plans; branches hang off their master
}

type plan struct {
	project        *project
	shortKey, name string
	master         *plan     // the plan this one is a branch of; nil for a master plan
	branches       []*plan   // a master plan's branches
	results        []*result // newest first
	// hidden plans exist but the service account may not see them: Bamboo
	// answers 403 for them and leaves them out of every list.
	hidden, favourite, clover bool
}

func (p *plan) key() string { return p.project.key + "-" + p.shortKey }
func (p *plan) fullName() string {
	if p.master != nil {
		return p.master.fullName() + " - " + p.name
	}
	return p.project.name + " - " + p.name
}

// latest is the newest finished result, or nil.
func (p *plan) latest() *result {
	for _, r := range p.results {
		if r.lifeCycle == lifeCycleFinished {
			return r
		}
	}
	return nil
}

// Life-cycle states of a result (Bamboo's lifeCycleState).
const (
	lifeCycleFinished   = "Finished"
	lifeCycleInProgress = "InProgress"
)

type result struct {
	plan        *plan
	number      int
	state       string
	id          int64
	artifacts   []Artifact
	labels      []string
	issues      []string // linked Jira issue keys
	comments    []string
	lifeCycle   string
	continuable bool    // a manual stage is left to run
	suites      []Tests // nil: the generated default (tests.go)
	revision    string  // empty: one of its own (revision)
}

func (r *result) key() string { return r.plan.key() + "-" + strconv.Itoa(r.number) }

// AddProject adds a project, or renames and re-describes an existing one.
// An empty description is left out of documents, as Bamboo does.
func (s *Catalogue) AddProject(key, name, description string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.projectLocked(key)
	p.name, p.description = name, description
}

// AddPlan adds a plan (shortKey "NIGHTLY", name "Nightly Build") to a
// project, creating the project if needed, or renames an existing plan.
func (s *Catalogue) AddPlan(projectKey, shortKey, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.planLocked(projectKey, shortKey).name = name
}

// AddResult adds (or replaces) build buildNumber of plan "PROJ-PLAN" with
// state "Successful" or "Failed", creating the project and plan if needed.
func (s *Builds) AddResult(planKey string, buildNumber int, state string, artifacts ...Artifact) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.findPlanLocked(planKey)
	if p == nil {
		projectKey, shortKey, ok := strings.Cut(planKey, "-")
		if !ok {
			panic("bambootest: plan key " + strconv.Quote(planKey) + " is not PROJ-PLAN")
		}
		p = s.planLocked(projectKey, shortKey)
	}
	r := s.addResultLocked(p, buildNumber, state, lifeCycleFinished)
	for _, a := range artifacts {
		a.ProducerJobKey = normaliseJob(planKey, buildNumber, a.ProducerJobKey)
		r.artifacts = append(r.artifacts, a)
	}
}

func (s *store) projectLocked(key string) *project {
	for _, p := range s.projects {
		if p.key == key {
			return p
		}
	}
	p := &project{key: key, name: key}
	s.projects = append(s.projects, p)
	return p
}

func (s *store) planLocked(projectKey, shortKey string) *plan {
	proj := s.projectLocked(projectKey)
	for _, p := range proj.plans {
		if p.shortKey == shortKey {
			return p
		}
	}
	p := &plan{project: proj, shortKey: shortKey, name: shortKey}
	proj.plans = append(proj.plans, p)
	s.plans[p.key()] = p
	return p
}

// findPlanLocked returns the plan or branch with full key "PROJ-PLAN", or nil.
func (s *store) findPlanLocked(planKey string) *plan { return s.plans[planKey] }

// findResultLocked returns the result with key "PROJ-PLAN-N", or nil.
func (s *store) findResultLocked(resultKey string) *result {
	cut := strings.LastIndex(resultKey, "-")
	if cut < 0 {
		return nil
	}
	number, err := strconv.Atoi(resultKey[cut+1:])
	p := s.findPlanLocked(resultKey[:cut])
	if err != nil || p == nil {
		return nil
	}
	for _, r := range p.results {
		if r.number == number {
			return r
		}
	}
	return nil
}

// GeneratedContent returns size bytes of a repeating text pattern, produced
// as they are read (and seekable, for Range requests), so that tests can
// serve and check files of hundreds of megabytes without holding them.
func GeneratedContent(size int64) io.ReadSeeker {
	return &patternReader{size: max(size, 0)}
}

const pattern = "facade bambootest generated artifact content 0123456789abcdef\n"

type patternReader struct{ size, off int64 }

func (p *patternReader) Read(b []byte) (int, error) {
	if p.off >= p.size {
		return 0, io.EOF
	}
	n := int(min(int64(len(b)), p.size-p.off))
	for i := 0; i < n; {
		i += copy(b[i:n], pattern[(p.off+int64(i))%int64(len(pattern)):])
	}
	p.off += int64(n)
	return n, nil
}

func (p *patternReader) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += p.off
	case io.SeekEnd:
		offset += p.size
	default:
		return 0, fmt.Errorf("bambootest: bad whence %d", whence)
	}
	if offset < 0 {
		return 0, fmt.Errorf("bambootest: negative position %d", offset)
	}
	p.off = offset
	return offset, nil
}

// AddBranch adds a branch (shortKey "CORE1", name "feature-x") to the
// master plan "PROJ-PLAN", which must exist. As in Bamboo, the branch is a
// plan of the master's project with its own key and results.
func (s *Catalogue) AddBranch(masterKey, shortKey, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.findPlanLocked(masterKey)
	if m == nil || m.master != nil {
		panic("bambootest: no master plan " + strconv.Quote(masterKey))
	}
	if s.findPlanLocked(m.project.key+"-"+shortKey) != nil {
		return
	}
	b := &plan{project: m.project, shortKey: shortKey, name: name, master: m}
	m.branches = append(m.branches, b)
	s.plans[b.key()] = b
}

// HidePlan makes "PROJ-PLAN" invisible to the service account: Bamboo then
// answers 403 for it and leaves it out of every list.
func (s *Catalogue) HidePlan(planKey string) { s.setPlan(planKey, func(p *plan) { p.hidden = true }) }

// SetFavourite marks a plan as a favourite of the service account.
func (s *Catalogue) SetFavourite(planKey string) {
	s.setPlan(planKey, func(p *plan) { p.favourite = true })
}

// SetClover marks a plan as having Clover code coverage enabled.
func (s *Catalogue) SetClover(planKey string) { s.setPlan(planKey, func(p *plan) { p.clover = true }) }

func (s *store) setPlan(planKey string, set func(*plan)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.findPlanLocked(planKey); p != nil {
		set(p)
	}
}

// LabelResult adds labels to the result "PROJ-PLAN-N".
func (s *Builds) LabelResult(resultKey string, labels ...string) {
	s.setResult(resultKey, func(r *result) { r.labels = append(r.labels, labels...) })
}

// LinkIssues links Jira issue keys ("WEB-101") to the result "PROJ-PLAN-N".
func (s *Builds) LinkIssues(resultKey string, issues ...string) {
	s.setResult(resultKey, func(r *result) { r.issues = append(r.issues, issues...) })
}

// CommentResult adds comments to the result "PROJ-PLAN-N".
func (s *Builds) CommentResult(resultKey string, comments ...string) {
	s.setResult(resultKey, func(r *result) { r.comments = append(r.comments, comments...) })
}

// SetInProgress marks the result "PROJ-PLAN-N" as still building: Bamboo
// leaves it out of result lists unless includeAllStates is set.
func (s *Builds) SetInProgress(resultKey string) {
	s.setResult(resultKey, func(r *result) { r.lifeCycle, r.state = lifeCycleInProgress, "Unknown" })
}

// SetContinuable marks the result "PROJ-PLAN-N" as having a manual stage
// left to run (Bamboo's continuable filter).
func (s *Builds) SetContinuable(resultKey string) {
	s.setResult(resultKey, func(r *result) { r.continuable = true })
}

func (s *store) setResult(resultKey string, set func(*result)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.findResultLocked(resultKey); r != nil {
		set(r)
	}
}
