package proxy

// The build routes, one entry each. An entry says everything that differs
// between two read routes of Bamboo's REST API as the facade serves them:
// what the path's key names, the permission checked before any upstream
// call, the upstream path, the expand values and result filters passed
// on, how the upstream document is fetched and cached, and how it becomes
// the caller's answer. The handler that serves entries (Handler.Serve) is
// written once; server/routes.go mounts each entry on its path. Adding a
// route is adding an entry here, a line there, and its test.
//
// The README's "Build routes" table lists every route with what it
// honours.

// Route is one read route of Bamboo's REST API.
type Route struct {
	// Name labels the route's upstream calls in metrics and logs.
	Name string
	// Key is what the path's :key (and :number) name.
	Key KeyKind
	// Need is the permission checked, from the identifiers alone, before
	// any upstream call.
	Need Need
	// Upstream is the upstream path below /rest/api/latest, one element
	// per segment; "{key}" stands for the parsed key. Empty for routes
	// answered from the shared project list.
	Upstream []string
	// Expand are the expand values Bamboo supports here that are passed
	// on when asked for (a deeper path selects its supported ancestor);
	// any other value is ignored.
	Expand []string
	// Recount are lists (expand values of this document) always asked of
	// upstream, so that the items of plans the caller may not see can be
	// removed and the list recounted; when the caller did not ask for one
	// it is collapsed again to its paging numbers. A collapsed list from
	// upstream would count hidden branches.
	Recount []string
	// Filters are the result-list filters honoured here, passed to
	// Bamboo as validated values; any other Bamboo filter is a 400 that
	// names it.
	Filters []string
	// Cache is how the upstream document is fetched and shared.
	Cache CachePolicy
	// View is how the document becomes the caller's answer.
	View View
	// List and Item name the list member of a list document
	// ("results", "result"); empty for single objects.
	List, Item string
}

// KeyKind is what a route's path identifies.
type KeyKind uint8

const (
	KeyNone      KeyKind = iota // no key: /plan, /result
	KeyProject                  // PROJ
	KeyPlan                     // PROJ-PLAN (a branch is a plan of its master's project)
	KeyResult                   // PROJ-PLAN-7, PROJ-PLAN-latest; or :key PROJ-PLAN with :number 7 or latest
	KeyJobResult                // PROJ-PLAN-JOB-7
)

// Need is the permission a route checks before any upstream call.
type Need uint8

const (
	// NeedNothing: a list filtered per principal; nobody is refused.
	NeedNothing Need = iota
	// NeedPlan: view on plan:K-P or project:K.
	NeedPlan
	// NeedProject: view on project:K, or on at least one of its plans as
	// the shared project list names them. A caller with neither is refused
	// whether the project exists or not.
	NeedProject
)

// CachePolicy is how an upstream document is fetched and shared through
// the response cache (every document lives FACADE_CACHE_TTL, then stale).
type CachePolicy uint8

const (
	// CacheProjectList: the one shared project list with every plan,
	// fetched whole and filtered in process (see projects.go).
	CacheProjectList CachePolicy = iota
	// CachePage: one upstream page per key, expand, filters and paging;
	// the same for every caller allowed to see it.
	CachePage
	// CacheCollected: every page of the list collected into one document
	// per key, expand and filters, then filtered per principal and paged
	// in process (a page of upstream items may hold few visible ones).
	CacheCollected
)

// View is how a document becomes the caller's answer.
type View uint8

const (
	ViewProjects View = iota // the project list (projects.go)
	ViewProject              // one project of the project list, its plans filtered
	ViewPlans                // every visible plan of the project list, paged
	ViewDocument             // the upstream document, links rewritten
	ViewPruned               // the upstream document, links rewritten, items of plans the caller may not see removed
	ViewList                 // a collected list, items of hidden plans removed, paged
)

// Bamboo's result-list filters (the ones its REST documentation lists).
const (
	FilterLabel            = "label"
	FilterIssueKey         = "issueKey"
	FilterBuildState       = "buildstate"
	FilterIncludeAllStates = "includeAllStates"
	FilterContinuable      = "continuable"
	FilterFavourite        = "favourite"
	FilterCloverEnabled    = "cloverEnabled"
)

// Expand values of results, single and in lists.
var (
	resultExpandValues = []string{"artifacts", "changes", "comments", "jiraIssues", "labels", "stages", "stages.stage.results"}
	jobExpandValues    = []string{"artifacts", "changes", "comments", "jiraIssues", "labels", "logEntries", "testResults"}
	resultListExpands  = prefixed("results.result", resultExpandValues)
	resultFilters      = []string{FilterLabel, FilterIssueKey, FilterBuildState, FilterIncludeAllStates, FilterContinuable}
	latestFilters      = append([]string{FilterCloverEnabled}, resultFilters...)
)

func prefixed(prefix string, values []string) []string {
	out := []string{prefix}
	for _, v := range values {
		out = append(out, prefix+"."+v)
	}
	return out
}

// The routes. Paths are in server/routes.go.
var (
	// ProjectList: GET /project. Projects with a visible plan, their plans
	// filtered, sizes recounted, paged after filtering.
	ProjectList = Route{Name: "projects", Key: KeyNone, Need: NeedNothing, Cache: CacheProjectList, View: ViewProjects,
		Expand: []string{"projects.project.plans"}}
	// Project: GET /project/{K}, with expand=plans its visible plans.
	Project = Route{Name: "project", Key: KeyProject, Need: NeedProject, Cache: CacheProjectList, View: ViewProject,
		Expand: []string{"plans"}}
	// PlanList: GET /plan. Every plan the caller may see.
	PlanList = Route{Name: "plans", Key: KeyNone, Need: NeedNothing, Cache: CacheProjectList, View: ViewPlans,
		List: "plans", Item: "plan"}
	// Plan: GET /plan/{K-P}; its branches, listed or collapsed, count only
	// visible ones.
	Plan = Route{Name: "plan", Key: KeyPlan, Need: NeedPlan, Upstream: []string{"plan", "{key}"},
		Expand: []string{"actions", "branches", "stages", "variableContext"}, Recount: []string{"branches"},
		Cache: CachePage, View: ViewPruned}
	// PlanBranches: GET /plan/{K-P}/branch. The branches the caller may see.
	PlanBranches = Route{Name: "branches", Key: KeyPlan, Need: NeedPlan, Upstream: []string{"plan", "{key}", "branch"},
		Cache: CacheCollected, View: ViewList, List: "branches", Item: "branch"}
	// LatestResults: GET /result. The latest result of each visible plan.
	LatestResults = Route{Name: "latest_results", Key: KeyNone, Need: NeedNothing, Upstream: []string{"result"},
		Expand: resultListExpands, Filters: latestFilters, Cache: CacheCollected, View: ViewList, List: "results", Item: "result"}
	// ProjectResults: GET /result/{K}. The latest result of each visible
	// plan of the project.
	ProjectResults = Route{Name: "project_results", Key: KeyProject, Need: NeedProject, Upstream: []string{"result", "{key}"},
		Expand: resultListExpands, Filters: latestFilters, Cache: CacheCollected, View: ViewList, List: "results", Item: "result"}
	// PlanResults: GET /result/{K-P}. A page of the plan's (or branch's) results.
	PlanResults = Route{Name: "results", Key: KeyPlan, Need: NeedPlan, Upstream: []string{"result", "{key}"},
		Expand: resultListExpands, Filters: resultFilters, Cache: CachePage, View: ViewDocument, List: "results", Item: "result"}
	// Result: GET /result/{K-P-N}, /result/{K-P}/{N}, /result/{K-P}/latest.
	Result = Route{Name: "result", Key: KeyResult, Need: NeedPlan, Upstream: []string{"result", "{key}"},
		Expand: resultExpandValues, Cache: CachePage, View: ViewDocument}
	// JobResult: GET /result/{K-P-J-N}.
	JobResult = Route{Name: "job_result", Key: KeyJobResult, Need: NeedPlan, Upstream: []string{"result", "{key}"},
		Expand: jobExpandValues, Cache: CachePage, View: ViewDocument}
	// ResultLabels and ResultComments: GET /result/{K-P-N}/label, /comment.
	ResultLabels = Route{Name: "result_labels", Key: KeyResult, Need: NeedPlan, Upstream: []string{"result", "{key}", "label"},
		Cache: CachePage, View: ViewDocument, List: "labels", Item: "label"}
	ResultComments = Route{Name: "result_comments", Key: KeyResult, Need: NeedPlan, Upstream: []string{"result", "{key}", "comment"},
		Cache: CachePage, View: ViewDocument, List: "comments", Item: "comment"}
)
