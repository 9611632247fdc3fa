package bambootest

import (
	"archive/zip"
	"bytes"
	"fmt"
	"strings"
	"time"
)

// DemoLargeArtifactSize is the size of the generated disk image in
// DemoData (INFRA-IMAGES), big enough to show that downloads stream.
const DemoLargeArtifactSize = 200 << 20

// demoPlan describes one plan of the demo history.
type demoPlan struct {
	project, key, name string
	builds             int    // number of results; build numbers 1..builds
	failing            string // per build (1-based, cycling): 'F' failed, anything else successful
	jar                string // file name of the built artifact; empty: none
	large              bool   // also publish a generated disk image
}

// DemoData fills s with a realistic history: four projects (PROJ, WEB,
// MOBILE, INFRA) of two or three plans each, several Successful and Failed
// results per plan, and per result a build log, a test report and usually
// a small archive. INFRA-IMAGES results also carry a shared
// DemoLargeArtifactSize disk image, generated while it is downloaded.
func DemoData(s *Server) {
	s.AddProject("PROJ", "Core Platform", "Shared libraries and the core service.")
	s.AddProject("WEB", "Web Frontend", "The customer-facing web application.")
	s.AddProject("MOBILE", "Mobile Apps", "")
	s.AddProject("INFRA", "Infrastructure", "Terraform modules and base images.")

	plans := []demoPlan{
		{"PROJ", "CORE", "Core Service", 6, "..F...", "core-service.jar", false},
		{"PROJ", "LIB", "Common Libraries", 4, "....", "commons.jar", false},
		{"PROJ", "RELEASE", "Release Train", 3, ".F.", "release-bundle.zip", false},
		{"WEB", "NIGHTLY", "Nightly Build", 5, ".F..F", "web-dist.zip", false},
		{"WEB", "PR", "Pull Requests", 4, "F...", "", false},
		{"MOBILE", "ANDROID", "Android App", 4, "..F.", "app-release.apk", false},
		{"MOBILE", "IOS", "iOS App", 3, "...", "app.ipa", false},
		{"INFRA", "TERRAFORM", "Terraform Modules", 4, ".F..", "", false},
		{"INFRA", "IMAGES", "Base Images", 3, "...", "", true},
	}
	for _, p := range plans {
		s.AddPlan(p.project, p.key, p.name)
		for n := 1; n <= p.builds; n++ {
			state := "Successful"
			if p.failing[(n-1)%len(p.failing)] == 'F' {
				state = "Failed"
			}
			s.AddResult(p.project+"-"+p.key, n, state, demoArtifacts(p, n, state)...)
		}
	}
	demoExtras(s)
}

// demoExtras gives the history what Bamboo users filter and browse by:
// plan branches with their own results, labels, linked Jira issues,
// comments, a favourite plan and a Clover-enabled one.
func demoExtras(s *Server) {
	branches := []struct{ master, key, name string }{
		{"PROJ-CORE", "CORE1", "feature-login"},
		{"PROJ-CORE", "CORE2", "bugfix-timeouts"},
		{"WEB-NIGHTLY", "NIGHTLY1", "release-2025"},
	}
	for _, b := range branches {
		s.AddBranch(b.master, b.key, b.name)
		branch := strings.SplitN(b.master, "-", 2)[0] + "-" + b.key
		for n := 1; n <= 2; n++ {
			s.AddResult(branch, n, "Successful", BuildLog("JOB1", nil))
		}
	}
	s.LabelResult("PROJ-CORE-6", "release")
	s.LabelResult("PROJ-CORE-4", "release", "hotfix")
	s.LabelResult("WEB-NIGHTLY-5", "release")
	s.LinkIssues("PROJ-CORE-5", "CORE-101")
	s.LinkIssues("WEB-NIGHTLY-4", "WEB-7", "WEB-9")
	s.CommentResult("PROJ-CORE-6", "Shipped to staging.")
	s.SetFavourite("WEB-NIGHTLY")
	s.SetClover("PROJ-LIB")
	s.SetContinuable("PROJ-RELEASE-2")
	// PROJ-CORE-4 built PROJ-CORE-3's commit again and passed: the test
	// that failed in 3 is flaky (GET /builds/PROJ-CORE/tests).
	const rebuilt = "5d0c1f3e9a7b2c4d6e8f0a1b3c5d7e9f1a2b4c6d"
	s.SetRevision("PROJ-CORE-3", rebuilt)
	s.SetRevision("PROJ-CORE-4", rebuilt)
}

func demoArtifacts(p demoPlan, n int, state string) []Artifact {
	planKey := p.project + "-" + p.key
	artifacts := []Artifact{
		BuildLog("JOB1", nil),
		{Name: "test-report.xml", ProducerJobKey: "JOB1", Content: junitReport(planKey, n, state)},
	}
	if p.jar != "" && state == "Successful" {
		artifacts = append(artifacts, Artifact{
			Name: p.jar, ProducerJobKey: "PKG", Shared: true, Content: demoArchive(planKey, n),
		})
	}
	if p.large {
		artifacts = append(artifacts, Artifact{
			Name: "base-image.img", ProducerJobKey: "IMG", Shared: true, Size: DemoLargeArtifactSize,
		})
	}
	return artifacts
}

func junitReport(planKey string, n int, state string) []byte {
	failures, failure := 0, ""
	if state == "Failed" {
		failures = 1
		failure = `<failure message="expected 200, got 500">assertion failed</failure>`
	}
	return fmt.Appendf(nil, `<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="%s" tests="3" failures="%d" errors="0" time="4.2">
  <testcase classname="%s.ApiTest" name="listsItems" time="1.1"/>
  <testcase classname="%s.ApiTest" name="rejectsBadInput" time="0.9"/>
  <testcase classname="%s.ApiTest" name="servesBuild%d" time="2.2">%s</testcase>
</testsuite>
`, planKey, failures, planKey, planKey, planKey, n, failure)
}

// demoArchive is a small valid zip (jar-like) naming its build.
func demoArchive(planKey string, n int) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	modified := epoch.Add(time.Duration(n) * 3 * time.Hour)
	files := []struct{ name, body string }{
		{"META-INF/MANIFEST.MF", fmt.Sprintf("Manifest-Version: 1.0\nImplementation-Title: %s\nImplementation-Version: %d\n", planKey, n)},
		{"README.txt", fmt.Sprintf("Build %d of %s, produced by the demo Bamboo.\n", n, planKey)},
	}
	for _, f := range files {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: f.name, Method: zip.Deflate, Modified: modified})
		if err != nil {
			panic(err) // writing to memory cannot fail
		}
		_, _ = w.Write([]byte(f.body))
	}
	if err := zw.Close(); err != nil {
		panic(err)
	}
	return buf.Bytes()
}
