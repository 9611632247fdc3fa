package proxy

import "github.com/facade-dev/facade/upstream"

// The build routes, one entry each. An entry says everything that differs
// between two read routes of Bamboo's REST API as the facade serves them:
// what the path's key names, the permission checked before any upstream
// call, the upstream path, the expand values and result filters passed
// on, how the upstream document is fetched and cached, and how it becomes
// the caller's answer; and where it is served. The handler that serves
// entries is written once (Handler.Read, Favourite and Download, one path
// of the table each: endpoints.go); server/routes.go mounts every path of
// the table. The table is at the end of this file.

// Route is one read route of Bamboo's REST API.
type Route struct {
	// Name labels the route's upstream calls in metrics and logs, and its
	// refusals in the audit log ("view_" + Name).
	Name string
	// Paths are where the route is served, in the router's (Echo's)
	// syntax, which server/routes.go mounts as they are: ":key" (and
	// ":number", ":resultKey") is one path segment, passed in still
	// percent-encoded (Request); a trailing "*" the rest of the path.
	// Several routes may share a path when the key's shape tells them
	// apart: /result/:key names a project (PROJ), a plan (PROJ-PLAN), a
	// result (PROJ-PLAN-7) or a job result (PROJ-PLAN-JOB-7).
	Paths []string
	// Key is what the path's {key} (and {number}) name.
	Key KeyKind
	// Need is the permission checked, from the identifiers alone, before
	// any upstream call.
	Need Need
	// Upstream is the upstream document below /rest/api/latest; a route
	// with a key asks about the request's (upstreamPath). Empty for
	// routes answered from the shared project list.
	Upstream upstream.Path
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
	// Answer says what the route answers, for the table of docs/build-routes.md.
	Answer string
	// Examples are requests that answer 200 against the demo data for
	// carol, who sees project PROJ (bambootest.DemoData, policy.csv). The
	// server's tests validate each answer (and its HEAD and ".json"
	// twins) against api/openapi.json; this package's tests call each.
	Examples []string
}

// KeyKind is what a route's path identifies.
type KeyKind uint8

const (
	KeyNone      KeyKind = iota // no key: /plan, /result
	KeyProject                  // PROJ
	KeyPlan                     // PROJ-PLAN (a branch is a plan of its master's project)
	KeyResult                   // PROJ-PLAN-7, PROJ-PLAN-latest; or :key PROJ-PLAN with :number 7 or latest
	KeyJobResult                // PROJ-PLAN-JOB-7
	KeyArtifact                 // the whole path: /browse/{result}/artifact/... or /download/... (parseArtifactPath)
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
	ViewProjects  View = iota // the project list (projects.go)
	ViewProject               // one project of the project list, its plans filtered
	ViewPlans                 // every visible plan of the project list, paged
	ViewDocument              // the upstream document, links rewritten
	ViewPruned                // the upstream document, links rewritten, items of plans the caller may not see removed
	ViewList                  // a collected list, items of hidden plans removed, paged
	ViewFile                  // an artifact or log, streamed from upstream as an attachment (artifact.go)
	ViewFavourite             // POST or DELETE: the caller marks or unmarks the plan (favourites.go)
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
	// testExpands are Bamboo's test expands of a job result: counts
	// (testResults), each list of tests (allTests, failedTests,
	// newFailedTests, ...), their tests (.testResult) and each one's
	// messages and stack (.testResult.errors). The deepest is forwarded
	// as asked, so a client gets why a build failed in one call. A plan
	// result has them below its jobs only (planTestExpands), as Bamboo
	// answers; on the plan result itself it has test counts.
	testExpands        = testExpandValues()
	planTestExpands    = prefixed("stages.stage.results.result", testExpands)
	resultExpandValues = append([]string{"artifacts", "changes", "changes.change.files", "comments", "jiraIssues", "labels", "stages", "stages.stage.results", "vcsRevisions"}, planTestExpands...)
	jobExpandValues    = append([]string{"artifacts", "changes", "changes.change.files", "comments", "jiraIssues", "labels", "logEntries", "vcsRevisions"}, testExpands...)
	resultListExpands  = prefixed("results.result", resultExpandValues)
	resultFilters      = []string{FilterLabel, FilterIssueKey, FilterBuildState, FilterIncludeAllStates, FilterContinuable, FilterFavourite}
	latestFilters      = append([]string{FilterCloverEnabled}, resultFilters...)
	// planListFilters: favourites (the caller's, kept by the facade) and
	// Clover, on the project and plan lists, as Bamboo takes them.
	planListFilters = []string{FilterFavourite, FilterCloverEnabled}
)

// testLists are the lists of a job result's testResults.
var testLists = []string{"allTests", "successfulTests", "failedTests", "newFailedTests", "existingFailedTests", "fixedTests", "quarantinedTests", "skippedTests"}

func testExpandValues() []string {
	out := []string{"testResults"}
	for _, l := range testLists {
		out = append(out, "testResults."+l, "testResults."+l+".testResult", "testResults."+l+".testResult.errors")
	}
	return out
}

func prefixed(prefix string, values []string) []string {
	out := []string{prefix}
	for _, v := range values {
		out = append(out, prefix+"."+v)
	}
	return out
}

// Routes is the one table of the build routes. It is the source of the
// server's routes (server/routes.go mounts every path of Endpoints), of
// this package's test server, of the table in docs/build-routes.md
// (TestBuildRoutesDocIsTheRouteTable renders it) and of the calls
// the server's tests make to validate every answer against
// api/openapi.json, whose build paths must be exactly these
// (TestOpenAPIDescribesEveryBuildPath). Adding a read route is adding an
// entry here, its path in api/openapi.json and upstream/bambootest's
// answer to the upstream path.
var Routes = []Route{
	{Name: "projects", Paths: []string{rest + "/project"}, Key: KeyNone, Need: NeedNothing,
		Cache: CacheProjectList, View: ViewProjects, Expand: []string{"projects.project.plans"}, Filters: planListFilters,
		Answer:   "projects with a visible plan, their plans filtered, paged after filtering",
		Examples: []string{rest + "/project?expand=projects.project.plans&max-results=10"}},
	{Name: "project", Paths: []string{rest + "/project/:key"}, Key: KeyProject, Need: NeedProject,
		Cache: CacheProjectList, View: ViewProject, Expand: []string{"plans"}, Filters: planListFilters,
		Answer:   "the project, its visible plans",
		Examples: []string{rest + "/project/PROJ?expand=plans"}},
	{Name: "plans", Paths: []string{rest + "/plan"}, Key: KeyNone, Need: NeedNothing,
		Cache: CacheProjectList, View: ViewPlans, List: "plans", Item: "plan", Filters: planListFilters,
		Answer:   "every visible plan, paged after filtering",
		Examples: []string{rest + "/plan?max-result=10&start-index=0"}},
	{Name: "plan", Paths: []string{rest + "/plan/:key"}, Key: KeyPlan, Need: NeedPlan, Upstream: upstream.Path{Resource: "plan"},
		Expand: []string{"actions", "branches", "stages", "variableContext"}, Recount: []string{"branches"},
		Cache: CachePage, View: ViewPruned,
		Answer:   "the plan; its branches, listed or collapsed, hold and count only visible ones (so Bamboo is always asked for them)",
		Examples: []string{rest + "/plan/PROJ-CORE?expand=branches"}},
	{Name: "branches", Paths: []string{rest + "/plan/:key/branch"}, Key: KeyPlan, Need: NeedPlan, Upstream: upstream.Path{Resource: "plan", Part: "branch"},
		Filters: []string{FilterFavourite}, Cache: CacheCollected, View: ViewList, List: "branches", Item: "branch",
		Answer:   "the visible branches, paged after filtering",
		Examples: []string{rest + "/plan/PROJ-CORE/branch"}},
	{Name: "latest_results", Paths: []string{rest + "/result"}, Key: KeyNone, Need: NeedNothing, Upstream: upstream.Path{Resource: "result"},
		Expand: resultListExpands, Filters: latestFilters, Cache: CacheCollected, View: ViewList, List: "results", Item: "result",
		Answer:   "the latest result of each visible plan",
		Examples: []string{rest + "/result?buildstate=Successful&includeAllStates=true"}},
	{Name: "project_results", Paths: []string{rest + "/result/:key"}, Key: KeyProject, Need: NeedProject, Upstream: upstream.Path{Resource: "result"},
		Expand: resultListExpands, Filters: latestFilters, Cache: CacheCollected, View: ViewList, List: "results", Item: "result",
		Answer:   "the latest result of each visible plan of K",
		Examples: []string{rest + "/result/WEB?expand=results.result.labels"}},
	{Name: "results", Paths: []string{rest + "/result/:key"}, Key: KeyPlan, Need: NeedPlan, Upstream: upstream.Path{Resource: "result"},
		Expand: resultListExpands, Filters: resultFilters, Cache: CachePage, View: ViewDocument, List: "results", Item: "result",
		Answer:   "a page of the plan's (or branch's) results",
		Examples: []string{rest + "/result/PROJ-CORE?label=release&max-results=5"}},
	{Name: "result", Paths: []string{rest + "/result/:key", rest + "/result/:key/:number"}, Key: KeyResult, Need: NeedPlan,
		Upstream: upstream.Path{Resource: "result"}, Expand: resultExpandValues, Cache: CachePage, View: ViewDocument,
		Answer:   "one result; N may be `latest` (`/result/{K-P}/latest`, `/result/{K-P-latest}`)",
		Examples: []string{rest + "/result/PROJ-CORE-6?expand=artifacts", rest + "/result/PROJ-CORE/6", rest + "/result/PROJ-CORE/latest"}},
	{Name: "job_result", Paths: []string{rest + "/result/:key"}, Key: KeyJobResult, Need: NeedPlan, Upstream: upstream.Path{Resource: "result"},
		Expand: jobExpandValues, Cache: CachePage, View: ViewDocument,
		Answer:   "one job result",
		Examples: []string{rest + "/result/PROJ-CORE-JOB1-6?expand=testResults"}},
	{Name: "result_labels", Paths: []string{rest + "/result/:key/label"}, Key: KeyResult, Need: NeedPlan, Upstream: upstream.Path{Resource: "result", Part: "label"},
		Cache: CachePage, View: ViewDocument, List: "labels", Item: "label",
		Answer:   "the result's labels",
		Examples: []string{rest + "/result/PROJ-CORE-6/label"}},
	{Name: "result_comments", Paths: []string{rest + "/result/:key/comment"}, Key: KeyResult, Need: NeedPlan, Upstream: upstream.Path{Resource: "result", Part: "comment"},
		Cache: CachePage, View: ViewDocument, List: "comments", Item: "comment",
		Answer:   "the result's comments",
		Examples: []string{rest + "/result/PROJ-CORE-6/comment"}},
	// Bamboo's own favourite routes, the one write: kept per person by
	// the facade, never sent upstream (favourites.go).
	{Name: "favourite", Paths: []string{rest + "/plan/:key/favourite"}, Key: KeyPlan, Need: NeedPlan,
		View:   ViewFavourite,
		Answer: "`POST` marks the plan as one of the caller's favourites, `DELETE` unmarks it (204; anti-forgery as for any write)"},
	// Bamboo's own artifact and log links, under the facade's host: the
	// links rewritten in every document lead here.
	{Name: "artifact", Paths: []string{"/browse/:resultKey/artifact/*", "/download/*"}, Key: KeyArtifact, Need: NeedPlan,
		View:     ViewFile,
		Answer:   "the artifact or log of a result or job result (`K-P-N`, `K-P-J-N`; downloads `K-P[-J]`), streamed as an attachment",
		Examples: []string{"/browse/PROJ-CORE-6/artifact/shared/core-service.jar/core-service.jar", "/download/PROJ-CORE-JOB1/build_logs/PROJ-CORE-JOB1-6.log"}},
}

// rest is where Bamboo's REST API lives, on Bamboo and on the facade.
const rest = "/rest/api/latest"
