package proxy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The real Bamboo samples (kept by the upstream package) carry upstream
// URLs in every form met in the wild: several host names for one server
// (08), a context path (01-04), HTML in buildReason (05), /download and
// artifactUrlRedirect.action artifact links (09).
func TestRewriteLeavesNoUpstreamHostInRealSamples(t *testing.T) {
	const base = "https://facade.example.org"
	cases := []struct {
		file  string
		hosts []string
		want  []string // substrings of the rewritten document
	}{
		{"01_project_list_default_expand__mibex.json", []string{"localhost:7990", "/bamboo/"},
			[]string{`"href":"` + base + `/rest/api/latest/project/COMMONS"`}},
		{"03_result_list_with_artifacts__mibex.json", []string{"localhost:7990", "/bamboo/"},
			[]string{`"href":"` + base + `/browse/MIRA-RSS-14/artifact/shared/Activity-Streams-for-Stash/target"`}},
		{"05_single_result_expanded_labels_typo3.json", []string{"bamboo.typo3.com"},
			// Bamboo's user page is not served: its link becomes text.
			[]string{`"buildReason":"Manual run by Susanne Moog"`}},
		{"06_single_result_with_changes_2011__jarib.json", []string{"localhost:8085"},
			[]string{`"commitUrl":"https://crucible/changelog/SVN?cs=1101"`}}, // not Bamboo: untouched
		{"08_project_list_collapsed_plans__lita.json", []string{"52.7.175.52", "bamboo.qsfllc.info"},
			[]string{`"href":"` + base + `/rest/api/latest/project/CRABBIT"`}},
		{"09_job_artifacts_fragment__BAM-17122.json", []string{"tardigrade-bamboo", "artifactUrlRedirect"},
			[]string{
				`"href":"` + base + `/download/BAM-FC-REST/build_logs/BAM-FC-REST-14444.log"`,
				`"href":"` + base + `/browse/BAM-FC-14444/artifact/REST/PerformanceStats/"`,
			}},
	}
	for _, tc := range cases {
		raw, err := os.ReadFile(filepath.Join("..", "upstream", "testdata", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		obj, err := (&document{body: raw}).parse(asObject) // as a document read from the shared cache is
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		out, err := encoded(obj)
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		doc := string(finished(out, base).body)
		for _, host := range tc.hosts {
			if strings.Contains(doc, host) {
				t.Errorf("%s: %q survived: %s", tc.file, host, doc)
			}
		}
		for _, want := range tc.want {
			if !strings.Contains(doc, want) {
				t.Errorf("%s: lacks %s", tc.file, want)
			}
		}
		if !json.Valid([]byte(doc)) {
			t.Errorf("%s: rewritten document is not JSON", tc.file)
		}
	}
}

// TestLinksInHTMLAreServedOrText: an anchor in a text member that leads
// to the upstream (or is host-relative) stays a link only when the route
// table serves its path; otherwise its text is left. Other hosts' links
// are not the facade's and stay.
func TestLinksInHTMLAreServedOrText(t *testing.T) {
	const up = basePlaceholder
	cases := map[string]string{
		`Changes by <a href="` + up + `/browse/user/developer">Developer</a>`:             `Changes by Developer`,
		`Manual run by <A HREF='` + up + `/browse/user/x?y=1'>X <b>Y</b></A> today`:       `Manual run by X <b>Y</b> today`,
		`see <a class="u" href="/browse/PROJ-CORE-6">build 6</a>`:                         `see build 6`,
		`open <a href="` + up + `/browse/user/x">never closed`:                            `open never closed`,
		`<a href="` + up + `/browse/PROJ-CORE-6/artifact/shared/app.jar/app.jar">app</a>`: `<a href="` + up + `/browse/PROJ-CORE-6/artifact/shared/app.jar/app.jar">app</a>`,
		`<a href="` + up + `/rest/api/latest/result/PROJ-CORE-6">result</a>`:              `<a href="` + up + `/rest/api/latest/result/PROJ-CORE-6">result</a>`,
		`<a href="https://jira.example.com/browse/CORE-1">CORE-1</a>`:                     `<a href="https://jira.example.com/browse/CORE-1">CORE-1</a>`,
		`<a name="top">anchor without href</a>`:                                           `<a name="top">anchor without href</a>`,
		`plain text, a <abbr>tag</abbr> & no link`:                                        `plain text, a <abbr>tag</abbr> & no link`,
	}
	for in, want := range cases {
		if got := unlinkUnserved(in); got != want {
			t.Errorf("unlinkUnserved(%q)\n = %q\nwant %q", in, got, want)
		}
	}
}

func TestRewriteRespectsURLBoundaries(t *testing.T) {
	r := &rewriter{prefixes: []string{"http://bamboo.example.com/ctx", "http://bamboo.example.com"}}
	cases := map[string]string{
		"http://bamboo.example.com/ctx/browse/X":                              basePlaceholder + "/browse/X",
		"http://bamboo.example.com/ctxother/x":                                basePlaceholder + "/ctxother/x",
		"see http://bamboo.example.com.":                                      "see http://bamboo.example.com.",
		"http://bamboo.example.community/x":                                   "http://bamboo.example.community/x",
		"<a href='http://bamboo.example.com'>":                                "<a href='" + basePlaceholder + "'>",
		"smuggled " + basePlaceholder + "/x":                                  "smuggled /x",
		"http://bamboo.example.com?x=1":                                       basePlaceholder + "?x=1",
		"two http://bamboo.example.com/ctx/a and http://bamboo.example.com/b": "two " + basePlaceholder + "/a and " + basePlaceholder + "/b",
	}
	for in, want := range cases {
		if got := r.rewrite(in); got != want {
			t.Errorf("rewrite(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestArtifactRedirectBecomesFacadeRoute(t *testing.T) {
	const p = basePlaceholder + "/build/result/artifactUrlRedirect.action?"
	cases := map[string]string{
		p + "planKey=BAM-FC-REST&buildNumber=14444&artifactName=PerformanceStats": basePlaceholder + "/browse/BAM-FC-14444/artifact/REST/PerformanceStats/",
		p + "planKey=BAM-FC&buildNumber=7&artifactName=My%20Dist":                 basePlaceholder + "/browse/BAM-FC-7/artifact/shared/My-Dist/",
		p + "planKey=bam-fc&buildNumber=7&artifactName=x":                         p + "planKey=bam-fc&buildNumber=7&artifactName=x",
		p + "planKey=BAM-FC&buildNumber=7&artifactName=..":                        p + "planKey=BAM-FC&buildNumber=7&artifactName=..",
		p + "planKey=BAM-FC&buildNumber=x&artifactName=a":                         p + "planKey=BAM-FC&buildNumber=x&artifactName=a",
	}
	for in, want := range cases {
		if got := artifactRedirectToRoute(in); got != want {
			t.Errorf("artifactRedirectToRoute(%q) = %q, want %q", in, got, want)
		}
	}
}
