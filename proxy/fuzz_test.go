package proxy

import (
	"strings"
	"testing"

	"github.com/facade-dev/facade"
)

// FuzzParseListParams: whatever the caller's query, parsing never panics
// and what it accepts is in range, so the upstream query built from it is
// always one the facade would have written itself.
func FuzzParseListParams(f *testing.F) {
	for _, q := range []string{"", "expand=results.result.artifacts&max-results=10&start-index=5", "max-result=100",
		"expand=x&admin=1", "max-results=1000", "start-index=-1", "os_authType=basic&showEmpty", "expand=%zz", "max-results=1&max-results=2"} {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, q string) {
		for _, supported := range [][]expandRule{projectExpands, resultExpands} {
			p, err := parseListParams(q, supported)
			if err != nil {
				if facade.ErrorCode(err) != facade.EINVALID {
					t.Fatalf("%q: error %v is not a 400", q, err)
				}
				continue
			}
			if p.maxResults < 1 || p.maxResults > maxPage || p.startIndex < 0 || p.startIndex > maxStartIndex {
				t.Fatalf("%q: out-of-range paging accepted: %+v", q, p)
			}
		}
	})
}

// FuzzParseArtifactPath: an accepted artifact path names a well-formed
// plan and can never climb out of /browse or /download on the upstream.
func FuzzParseArtifactPath(f *testing.F) {
	for _, p := range []string{"/browse/PROJ-CORE-6/artifact/JOB1/app.jar/app.jar", "/download/PROJ-CORE-JOB1/build_logs/PROJ-CORE-JOB1-6.log",
		"/browse/PROJ-CORE-6/artifact/JOB1/%2e%2e/x", "/browse/PROJ-CORE-6/artifact/JOB1/a%2Fb", "/download/../../etc/passwd", "/browse/PROJ-CORE-JOB1-6/artifact/JOB1/name/"} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, escaped string) {
		target, err := parseArtifactPath(escaped)
		if err != nil {
			return
		}
		if !facade.ValidProjectKey(target.plan.project) || !facade.ValidPlanKey(target.plan.plan) {
			t.Fatalf("%q: accepted with plan %v", escaped, target.plan)
		}
		if !strings.HasPrefix(target.path, "/browse/") && !strings.HasPrefix(target.path, "/download/") {
			t.Fatalf("%q: upstream path %q outside /browse and /download", escaped, target.path)
		}
		for _, seg := range strings.Split(target.path, "/")[1:] {
			if seg == "." || seg == ".." || strings.ContainsAny(seg, "?#%\\") {
				t.Fatalf("%q: upstream path %q has segment %q", escaped, target.path, seg)
			}
		}
	})
}
