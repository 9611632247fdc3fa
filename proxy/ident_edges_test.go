package proxy

import (
	"strings"
	"testing"
)

// TestArtifactPathLimits: the artifact path limits of docs/contract.md §3
// hold exactly: a path at a limit (2048 bytes, 32 segments, a 255-byte
// segment, a 10-digit build number, the shortest route forms) downloads,
// one past it is a 400 before any upstream call.
func TestArtifactPathLimits(t *testing.T) {
	seg := func(n int) string { return strings.Repeat("a", n) }
	// "/download/PROJ-CORE" is 19 bytes; segments of 255 plus their "/" fill the rest.
	long := "/download/PROJ-CORE" + strings.Repeat("/"+seg(255), 7) + "/" + seg(2048-19-7*256-1)
	many := "/download/PROJ-CORE" + strings.Repeat("/x", 30)
	for _, c := range []struct {
		name, path string
		ok         bool
	}{
		{"2048 bytes", long, true},
		{"2049 bytes", long + "a", false},
		{"32 segments", many, true},
		{"33 segments", many + "/x", false},
		{"a 255-byte segment", "/browse/PROJ-CORE-6/artifact/JOB1/" + seg(255), true},
		{"a 256-byte segment", "/browse/PROJ-CORE-6/artifact/JOB1/" + seg(256), false},
		{"a 10-digit build number", "/browse/PROJ-CORE-1234567890/artifact/JOB1/a.jar", true},
		{"an 11-digit build number", "/browse/PROJ-CORE-12345678901/artifact/JOB1/a.jar", false},
		{"build 0", "/browse/PROJ-CORE-0/artifact/JOB1/a.jar", true},
		{"build 9", "/browse/PROJ-CORE-9/artifact/JOB1/a.jar", true},
		{"a build number with a colon", "/browse/PROJ-CORE-9:/artifact/JOB1/a.jar", false},
		{"a build number with a slash", "/browse/PROJ-CORE-/0/artifact/JOB1/a.jar", false},
		{"a plan's download, three segments", "/download/PROJ-CORE/a.log", true},
		{"two segments", "/download/PROJ-CORE", false},
		{"a plan result's artifact, four segments", "/browse/PROJ-CORE-6/artifact/a.jar", true},
		{"a job's log", "/download/PROJ-CORE-JOB1/build_logs/PROJ-CORE-JOB1-6.log", true},
		{"a space in a name", "/browse/PROJ-CORE-6/artifact/JOB1/My%20Report", true},
		{"a unit separator in a name", "/browse/PROJ-CORE-6/artifact/JOB1/a%1Fb", false},
		{"DEL in a name", "/browse/PROJ-CORE-6/artifact/JOB1/a%7Fb", false},
		{"an encoded slash first in a name", "/browse/PROJ-CORE-6/artifact/JOB1/%2Fetc", false},
	} {
		_, err := parseArtifactPath(c.path)
		if (err == nil) != c.ok {
			t.Errorf("%s (%d bytes): %v, want ok=%v", c.name, len(c.path), err, c.ok)
		}
	}
}
