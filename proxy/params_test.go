package proxy

import "testing"

func TestParseListParams(t *testing.T) {
	cases := []struct {
		query    string
		supports []expandRule
		want     listParams
		bad      bool
	}{
		{"", resultExpands, listParams{maxResults: 25}, false},
		{"expand=results.result.artifacts", resultExpands, listParams{expand: expandArtifacts, maxResults: 25}, false},
		{"expand=results.result&expand=results.result.artifacts.artifact", resultExpands, listParams{expand: expandArtifacts, maxResults: 25}, false},
		{"expand=results.result,%20nonsense", resultExpands, listParams{expand: expandResult, maxResults: 25}, false},
		{"expand=projects.project.plans", resultExpands, listParams{maxResults: 25}, false},
		{"expand=projects.project.plans", projectExpands, listParams{expand: expandPlans, maxResults: 25}, false},
		{"expand=projects.project.plans.plan.stages", projectExpands, listParams{expand: expandPlans, maxResults: 25}, false},
		{"expand=projects.project.plansX,projects.project", projectExpands, listParams{maxResults: 25}, false},
		{"expand=results.result.labels", resultExpands, listParams{expand: expandResult, maxResults: 25}, false},
		{"expand=results.resultX", resultExpands, listParams{maxResults: 25}, false},
		{"max-result=100&start-index=999999999", projectExpands, listParams{maxResults: 100, startIndex: 999999999}, false},
		{"max-results=7&max-result=7", projectExpands, listParams{maxResults: 7}, false},
		{"showEmpty&os_authType=basic&max-results=3&%zz=1", projectExpands, listParams{maxResults: 3}, false},
		{"max-results=101", projectExpands, listParams{}, true},
		{"max-results=", projectExpands, listParams{}, true},
		{"max-results=+5", projectExpands, listParams{}, true},
		{"max-results=%zz", projectExpands, listParams{}, true},
		{"start-index=1000000000", projectExpands, listParams{}, true},
		{"start-index=0x10", projectExpands, listParams{}, true},
		{"start-index=1&start-index=2", projectExpands, listParams{}, true},
	}
	for _, tc := range cases {
		got, err := parseListParams(tc.query, tc.supports)
		if tc.bad {
			if err == nil {
				t.Errorf("%q: accepted, want 400", tc.query)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: %+v %v, want %+v", tc.query, got, err, tc.want)
		}
	}
}

func TestParseArtifactPath(t *testing.T) {
	good := map[string]artifactTarget{
		"/browse/PROJ-CORE-6/artifact/shared/core-service.jar/":         {planRef{"PROJ", "CORE"}, "/browse/PROJ-CORE-6/artifact/shared/core-service.jar/", "core-service.jar"},
		"/browse/PROJ-CORE-JOB1-6/artifact/JOB1/My%20Report/index.html": {planRef{"PROJ", "CORE"}, "/browse/PROJ-CORE-JOB1-6/artifact/JOB1/My Report/index.html", "index.html"},
		"/download/BAM-FC-REST/build_logs/BAM-FC-REST-14444.log":        {planRef{"BAM", "FC"}, "/download/BAM-FC-REST/build_logs/BAM-FC-REST-14444.log", "BAM-FC-REST-14444.log"},
	}
	for in, want := range good {
		got, err := parseArtifactPath(in)
		if err != nil || got != want {
			t.Errorf("%s: %+v %v, want %+v", in, got, err, want)
		}
	}
}

func TestLRUBoundsEntriesAndCost(t *testing.T) {
	l := newLRU[string, int](3, 100)
	l.add("a", 1, 10)
	l.add("b", 2, 10)
	l.add("c", 3, 10)
	l.get("a") // a is now the most recent; b the least
	l.add("d", 4, 10)
	if _, ok := l.get("b"); ok || l.len() != 3 {
		t.Errorf("entry bound: b kept or %d entries", l.len())
	}
	l.add("big", 5, 90) // evicts the least recent until cost fits: c, then a
	if _, ok := l.get("big"); !ok || l.len() != 2 {
		t.Errorf("cost bound: %d entries left", l.len())
	}
	l.add("huge", 6, 101) // larger than the budget: not stored, nothing evicted
	if _, ok := l.get("huge"); ok || l.len() != 2 {
		t.Error("an over-budget value was stored")
	}
}
