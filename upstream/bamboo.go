package upstream

import "encoding/json"

// Wire types of Bamboo's REST JSON, named exactly as on the wire (see the
// samples under testdata/). They model what the proxy filters and rewrites;
// everything else rides along in each object's Extra map (a
// map[string]json.RawMessage promoted from an embedded field), so a decode
// followed by an encode returns the same document (as JSON values; member
// order may differ: modelled members first, then Extra by name).
//
// A modelled member the document carried is written back even when zero
// ("size": 0, "enabled": false, "artifact": []); one it lacked is written
// only once the program sets it to a non-zero value. A nil item slice
// (Project, Plan, Result, Artifact) is a collapsed list and is never
// written, even if decoded; an empty non-nil one is written as []. The
// paging numbers of lists are always written.
//
// Note for rewriting: Extra members can carry upstream URLs too (for example
// "buildReason" and "reasonSummary" hold HTML with links to the Bamboo host,
// as in sample 05 and in bambootest's documents).
//
// The zero value of each type is an empty object: encoding it writes only
// the members set since, plus the paging numbers of lists.

// Link is Bamboo's {"href", "rel"} pair.
type Link struct {
	Href string `json:"href"`
	Rel  string `json:"rel"`
	members
}

// KeyRef is a {"key"} object, as in "planKey" and "entityKey".
type KeyRef struct {
	Key string `json:"key"`
	members
}

// ProjectsPage is the document of GET /rest/api/latest/project.
type ProjectsPage struct {
	Expand   string      `json:"expand"`
	Link     Link        `json:"link"`
	Projects ProjectList `json:"projects"`
	members
}

// ProjectList is the "projects" list. On /project, Size is the total number
// of projects, MaxResult the number in this page.
type ProjectList struct {
	Size       int       `json:"size" wire:"always"`
	Expand     string    `json:"expand"`
	StartIndex int       `json:"start-index" wire:"always"`
	MaxResult  int       `json:"max-result" wire:"always"`
	Project    []Project `json:"project"`
	members
}

// Project is one build project. Plans is collapsed (paging numbers only,
// Plan nil) unless the request asked for expand=projects.project.plans.
type Project struct {
	Expand      string   `json:"expand"`
	Key         string   `json:"key"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Link        Link     `json:"link"`
	Plans       PlanList `json:"plans"`
	members
}

// PlansPage is the document of GET /rest/api/latest/plan.
type PlansPage struct {
	Expand string   `json:"expand"`
	Link   Link     `json:"link"`
	Plans  PlanList `json:"plans"`
	members
}

// PlanList is a "plans" list.
type PlanList struct {
	Size       int    `json:"size" wire:"always"`
	Expand     string `json:"expand"`
	StartIndex int    `json:"start-index" wire:"always"`
	MaxResult  int    `json:"max-result" wire:"always"`
	Plan       []Plan `json:"plan"`
	members
}

// Plan is one build plan; Key is the full "PROJ-PLAN" key, ShortKey the
// plan's own part.
type Plan struct {
	Expand      string  `json:"expand"`
	ProjectKey  string  `json:"projectKey"`
	ProjectName string  `json:"projectName"`
	Project     Project `json:"project"`
	Description string  `json:"description"`
	ShortName   string  `json:"shortName"`
	ShortKey    string  `json:"shortKey"`
	Type        string  `json:"type"`
	Enabled     bool    `json:"enabled"`
	Link        Link    `json:"link"`
	Key         string  `json:"key"`
	Name        string  `json:"name"`
	PlanKey     KeyRef  `json:"planKey"`
	members
}

// ResultsPage is the document of GET /rest/api/latest/result/{PROJ-PLAN}.
type ResultsPage struct {
	Expand  string     `json:"expand"`
	Link    Link       `json:"link"`
	Results ResultList `json:"results"`
	members
}

// ResultList is the "results" list. On /result, Size is the number of
// results in this page (not the total).
type ResultList struct {
	Size       int      `json:"size" wire:"always"`
	Expand     string   `json:"expand"`
	StartIndex int      `json:"start-index" wire:"always"`
	MaxResult  int      `json:"max-result" wire:"always"`
	Result     []Result `json:"result"`
	members
}

// Result is one build result. Artifacts is collapsed unless the request
// asked for expand=results.result.artifacts.
type Result struct {
	Expand         string        `json:"expand"`
	Link           Link          `json:"link"`
	Plan           Plan          `json:"plan"`
	PlanName       string        `json:"planName"`
	ProjectName    string        `json:"projectName"`
	BuildResultKey string        `json:"buildResultKey"`
	LifeCycleState string        `json:"lifeCycleState"`
	ID             int64         `json:"id"`
	Key            string        `json:"key"`
	PlanResultKey  PlanResultKey `json:"planResultKey"`
	State          string        `json:"state"`
	BuildState     string        `json:"buildState"`
	Number         int           `json:"number"`
	BuildNumber    int           `json:"buildNumber"`
	Artifacts      ArtifactList  `json:"artifacts"`
	members
}

// PlanResultKey is {"key": "PROJ-PLAN-7", "entityKey": {"key": "PROJ-PLAN"}, "resultNumber": 7}.
type PlanResultKey struct {
	Key          string `json:"key"`
	EntityKey    KeyRef `json:"entityKey"`
	ResultNumber int    `json:"resultNumber"`
	members
}

// ArtifactList is an "artifacts" list.
type ArtifactList struct {
	Size       int        `json:"size" wire:"always"`
	Expand     string     `json:"expand"`
	StartIndex int        `json:"start-index" wire:"always"`
	MaxResult  int        `json:"max-result" wire:"always"`
	Artifact   []Artifact `json:"artifact"`
	members
}

// Artifact is one artifact of a result. Size and PrettySizeDescription are
// absent for a "Build log". Link.Href takes several forms: a
// /browse/{PROJ-PLAN-N}/artifact/{JOB|shared}/{name}/ directory URL, a
// /download/.../build_logs/....log URL, or artifactUrlRedirect.action?....
type Artifact struct {
	Name                  string `json:"name"`
	Link                  Link   `json:"link"`
	ProducerJobKey        string `json:"producerJobKey"`
	Shared                bool   `json:"shared"`
	Size                  int64  `json:"size"`
	PrettySizeDescription string `json:"prettySizeDescription"`
	members
}

// ErrorBody is Bamboo's JSON error document.
type ErrorBody struct {
	Message    string `json:"message"`
	StatusCode int    `json:"status-code"`
	members
}

func (v *Link) UnmarshalJSON(b []byte) error          { return decodeObject(b, v) }
func (v Link) MarshalJSON() ([]byte, error)           { return encodeObject(&v) }
func (v *KeyRef) UnmarshalJSON(b []byte) error        { return decodeObject(b, v) }
func (v KeyRef) MarshalJSON() ([]byte, error)         { return encodeObject(&v) }
func (v *ProjectsPage) UnmarshalJSON(b []byte) error  { return decodeObject(b, v) }
func (v ProjectsPage) MarshalJSON() ([]byte, error)   { return encodeObject(&v) }
func (v *ProjectList) UnmarshalJSON(b []byte) error   { return decodeObject(b, v) }
func (v ProjectList) MarshalJSON() ([]byte, error)    { return encodeObject(&v) }
func (v *Project) UnmarshalJSON(b []byte) error       { return decodeObject(b, v) }
func (v Project) MarshalJSON() ([]byte, error)        { return encodeObject(&v) }
func (v *PlansPage) UnmarshalJSON(b []byte) error     { return decodeObject(b, v) }
func (v PlansPage) MarshalJSON() ([]byte, error)      { return encodeObject(&v) }
func (v *PlanList) UnmarshalJSON(b []byte) error      { return decodeObject(b, v) }
func (v PlanList) MarshalJSON() ([]byte, error)       { return encodeObject(&v) }
func (v *Plan) UnmarshalJSON(b []byte) error          { return decodeObject(b, v) }
func (v Plan) MarshalJSON() ([]byte, error)           { return encodeObject(&v) }
func (v *ResultsPage) UnmarshalJSON(b []byte) error   { return decodeObject(b, v) }
func (v ResultsPage) MarshalJSON() ([]byte, error)    { return encodeObject(&v) }
func (v *ResultList) UnmarshalJSON(b []byte) error    { return decodeObject(b, v) }
func (v ResultList) MarshalJSON() ([]byte, error)     { return encodeObject(&v) }
func (v *Result) UnmarshalJSON(b []byte) error        { return decodeObject(b, v) }
func (v Result) MarshalJSON() ([]byte, error)         { return encodeObject(&v) }
func (v *PlanResultKey) UnmarshalJSON(b []byte) error { return decodeObject(b, v) }
func (v PlanResultKey) MarshalJSON() ([]byte, error)  { return encodeObject(&v) }
func (v *ArtifactList) UnmarshalJSON(b []byte) error  { return decodeObject(b, v) }
func (v ArtifactList) MarshalJSON() ([]byte, error)   { return encodeObject(&v) }
func (v *Artifact) UnmarshalJSON(b []byte) error      { return decodeObject(b, v) }
func (v Artifact) MarshalJSON() ([]byte, error)       { return encodeObject(&v) }
func (v *ErrorBody) UnmarshalJSON(b []byte) error     { return decodeObject(b, v) }
func (v ErrorBody) MarshalJSON() ([]byte, error)      { return encodeObject(&v) }

// Compile-time check that every wire type round-trips through its own methods.
var (
	_ json.Marshaler   = Result{}
	_ json.Unmarshaler = (*Result)(nil)
)
