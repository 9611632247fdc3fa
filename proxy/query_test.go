package proxy

import (
	"github.com/facade-dev/facade"
	"strings"
	"testing"
)

func TestParseRouteQuery(t *testing.T) {
	cases := []struct {
		query  string
		route  *Route
		paging listParams
		expand string
		bad    bool
	}{
		{"", route("results"), listParams{maxResults: 25}, "", false},
		{"expand=results.result.artifacts", route("results"), listParams{maxResults: 25}, "results.result.artifacts", false},
		{"expand=results.result&expand=results.result.artifacts.artifact", route("results"), listParams{maxResults: 25}, "results.result,results.result.artifacts", false},
		{"expand=results.result,%20nonsense", route("results"), listParams{maxResults: 25}, "results.result", false},
		{"expand=projects.project.plans", route("results"), listParams{maxResults: 25}, "", false},
		{"expand=projects.project.plans", route("projects"), listParams{expand: expandPlans, maxResults: 25}, "projects.project.plans", false},
		{"expand=projects.project.plans.plan.stages", route("projects"), listParams{expand: expandPlans, maxResults: 25}, "projects.project.plans", false},
		{"expand=projects.project.plansX,projects.project", route("projects"), listParams{maxResults: 25}, "", false},
		{"expand=results.result.labels.label", route("results"), listParams{maxResults: 25}, "results.result.labels", false},
		{"expand=results.resultX", route("results"), listParams{maxResults: 25}, "", false},
		{"expand=stages.stage.results.result.labels,logEntries", route("result"), listParams{maxResults: 25}, "stages.stage.results.result", false},
		{"expand=testResults.failedTests.testResult.errors", route("result"), listParams{maxResults: 25}, "", false}, // a plan result has its tests below its jobs
		{"max-result=100&start-index=999999999", route("projects"), listParams{maxResults: 100, startIndex: 999999999}, "", false},
		{"max-results=7&max-result=7", route("projects"), listParams{maxResults: 7}, "", false},
		{"showEmpty&os_authType=basic&max-results=3&%zz=1", route("projects"), listParams{maxResults: 3}, "", false},
		{"max-results=1001", route("projects"), listParams{}, "", true},
		{"max-results=", route("projects"), listParams{}, "", true},
		{"max-results=+5", route("projects"), listParams{}, "", true},
		{"max-results=%zz", route("projects"), listParams{}, "", true},
		{"expand=%zz", route("projects"), listParams{}, "", true},
		{"start-index=1000000000", route("projects"), listParams{}, "", true},
		{"start-index=0x10", route("projects"), listParams{}, "", true},
		{"start-index=1&start-index=2", route("projects"), listParams{}, "", true},
	}
	for _, tc := range cases {
		got, err := parseRouteQuery(tc.query, tc.route)
		if tc.bad {
			if err == nil {
				t.Errorf("%q: accepted, want 400", tc.query)
			}
			continue
		}
		if err != nil || got.listParams != tc.paging || strings.Join(got.expand, ",") != tc.expand {
			t.Errorf("%q on %s: %+v %v %v, want %+v %q", tc.query, tc.route.Name, got.listParams, got.expand, err, tc.paging, tc.expand)
		}
	}
}

func TestParseArtifactPath(t *testing.T) {
	good := map[string]artifactTarget{
		"/browse/PROJ-CORE-6/artifact/shared/core-service.jar/":         {mustPlan("PROJ-CORE"), "/browse/PROJ-CORE-6/artifact/shared/core-service.jar/", "core-service.jar"},
		"/browse/PROJ-CORE-JOB1-6/artifact/JOB1/My%20Report/index.html": {mustPlan("PROJ-CORE"), "/browse/PROJ-CORE-JOB1-6/artifact/JOB1/My Report/index.html", "index.html"},
		"/download/BAM-FC-REST/build_logs/BAM-FC-REST-14444.log":        {mustPlan("BAM-FC"), "/download/BAM-FC-REST/build_logs/BAM-FC-REST-14444.log", "BAM-FC-REST-14444.log"},
	}
	for in, want := range good {
		got, err := parseArtifactPath(in)
		if err != nil || got != want {
			t.Errorf("%s: %+v %v, want %+v", in, got, err, want)
		}
	}
}

// mustPlan is a well-formed plan key.
func mustPlan(s string) facade.PlanKey {
	k, err := facade.ParsePlanKey(s)
	if err != nil {
		panic(s + ": " + err.Error())
	}
	return k
}
