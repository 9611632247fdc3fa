package proxy

import (
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/facade-dev/facade"
)

// Identifier checks (docs/contract.md §3). Keys run on the RAW path text,
// read from the escaped path still percent-encoded (endpoints.go), so an
// encoded "/", "." or "?" is simply a character outside the allowed set. Artifact path segments
// are decoded one at a time, checked (no "/", "..", "%", "?", "#",
// control characters) and re-escaped by the upstream client: nothing a
// caller encodes can shape an upstream URL or a cache key.

// Artifact path limits: generous for real artifact trees, small enough
// that no path is a resource problem.
const (
	maxArtifactPath     = 2048
	maxArtifactSegments = 32
	maxSegmentBytes     = 255
)

// artifactTarget is a validated artifact request.
type artifactTarget struct {
	plan facade.PlanKey
	path string // unescaped, "/browse/..." or "/download/...", for upstream.Client.Artifact
	name string // last non-empty segment, unescaped
}

// parseArtifactPath validates the escaped request path of an artifact
// download. The accepted forms are the ones Bamboo links to:
//
//	/browse/{K-P-N}/artifact/{JOB|shared}/{name}/...   (plan result)
//	/browse/{K-P-J-N}/artifact/{J}/{name}/...          (job result)
//	/download/{K-P-J}/build_logs/{K-P-J-N}.log         (and other /download/{K-P[-J]}/... files)
//
// Every segment is unescaped on its own and must then be non-empty (only
// the last may be, for Bamboo's directory links), not "." or "..", valid
// UTF-8 of at most 255 bytes, without control characters and without any
// of / \ ? # %. The last rule means an encoded "/" (%2F) never splits or
// joins segments, and the upstream client's own check can never refuse
// what this one let through.
func parseArtifactPath(escaped string) (artifactTarget, error) {
	refuse := artifactRefusal(escaped)
	if len(escaped) > maxArtifactPath || !strings.HasPrefix(escaped, "/") {
		return artifactTarget{}, refuse(false)
	}
	raw := strings.Split(escaped[1:], "/")
	if len(raw) > maxArtifactSegments || len(raw) < 3 {
		return artifactTarget{}, refuse(false)
	}
	segs := make([]string, len(raw))
	for i, r := range raw {
		s, ok := artifactSegment(r, i == len(raw)-1)
		if !ok {
			return artifactTarget{}, refuse(i == 1)
		}
		segs[i] = s
	}
	// The route and key segments are identifiers: checked as sent, like
	// the result key, so an encoded character there is refused too.
	ref, ok := artifactPlan(segs)
	if !ok || raw[0] != segs[0] || raw[1] != segs[1] || raw[2] != segs[2] {
		return artifactTarget{}, refuse(raw[1] != segs[1] || !validArtifactKey(segs))
	}
	name := segs[len(segs)-1]
	if name == "" {
		name = segs[len(segs)-2]
	}
	return artifactTarget{plan: ref, path: "/" + strings.Join(segs, "/"), name: name}, nil
}

// artifactPlan finds the plan in the route's key segment.
func artifactPlan(segs []string) (facade.PlanKey, bool) {
	parts := strings.Split(segs[1], "-")
	if len(parts) < 2 {
		return facade.PlanKey{}, false
	}
	ref, err := facade.ParsePlanKey(parts[0] + "-" + parts[1])
	if err != nil {
		return facade.PlanKey{}, false
	}
	switch segs[0] {
	case "browse":
		// K-P-N or K-P-J-N, then "artifact", then at least a name.
		ok := (len(parts) == 3 || len(parts) == 4 && facade.ValidPlanKey(parts[2])) &&
			facade.ValidBuildNumber(parts[len(parts)-1]) &&
			len(segs) >= 4 && segs[2] == "artifact" && segs[3] != ""
		return ref, ok
	case "download":
		// K-P or K-P-J, then at least one file segment.
		ok := (len(parts) == 2 || len(parts) == 3 && facade.ValidPlanKey(parts[2])) && segs[2] != ""
		return ref, ok
	}
	return facade.PlanKey{}, false
}

func artifactSegment(raw string, last bool) (string, bool) {
	s, err := url.PathUnescape(raw)
	if err != nil || len(s) > maxSegmentBytes || !utf8.ValidString(s) {
		return "", false
	}
	if s == "" {
		return "", last
	}
	if s == "." || s == ".." {
		return "", false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == 0x7f || strings.IndexByte(`/\?#%`, c) >= 0 {
			return "", false
		}
	}
	return s, true
}

// badIdentifier refuses the path parameter api/openapi.json names param
// (projectKey, planKey, key, resultKey, buildNumber, artifactPath,
// downloadPath): the problem's errors item tells a client which part of
// the path to fix.
func badIdentifier(param string) error {
	return facade.Refuse(facade.ErrBadIdentifier, param, facade.ReasonMalformed)
}

// artifactRefusal names what a refused artifact path got wrong as
// api/openapi.json's parameters do: a /download path is one parameter,
// downloadPath; a /browse path has its resultKey (the key segment, when
// that is what is wrong) and then its artifactPath.
func artifactRefusal(escaped string) func(keyWrong bool) error {
	return func(keyWrong bool) error {
		switch {
		case !strings.HasPrefix(escaped, "/browse/"):
			return badIdentifier("downloadPath")
		case keyWrong:
			return badIdentifier("resultKey")
		}
		return badIdentifier("artifactPath")
	}
}

// validArtifactKey reports whether a /browse path's key segment is a
// result key (K-P-N or K-P-J-N), whatever the rest of the path.
func validArtifactKey(segs []string) bool {
	parts := strings.Split(segs[1], "-")
	return (len(parts) == 3 || len(parts) == 4 && facade.ValidPlanKey(parts[2])) &&
		facade.ValidProjectKey(parts[0]) && facade.ValidPlanKey(parts[1]) &&
		facade.ValidBuildNumber(parts[len(parts)-1])
}
