package monitoring

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"unicode"

	"sigs.k8s.io/yaml"
)

// tool returns the path of a program of Debian's prometheus package.
// Without it the test fails under CI=true (.ci/run installs the package)
// and is skipped elsewhere, saying what to install.
func tool(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is not installed (Debian's prometheus package; .ci/run installs it)", name)
	}
	t.Skipf("%s is not installed: apt-get install prometheus", name)
	return ""
}

// TestRulesPassPromtool runs `promtool check rules` on the rules file and
// `promtool test rules` on its unit tests, as CI does.
func TestRulesPassPromtool(t *testing.T) {
	promtool := tool(t, "promtool")
	for _, args := range [][]string{{"check", "rules", rulesFile}, {"test", "rules", ruleTestsFile}} {
		out, err := exec.Command(promtool, args...).CombinedOutput()
		if err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// TestEveryAlertSaysWhatToDo: every alert has a severity a route can
// match (critical pages, warning opens a ticket), a summary and a
// description, and a runbook_url whose anchor is a heading of
// docs/operations.md, the runbook.
func TestEveryAlertSaysWhatToDo(t *testing.T) {
	doc, err := os.ReadFile(operationsDoc)
	if err != nil {
		t.Fatal(err)
	}
	anchors := headingAnchors(string(doc))
	alerts := 0
	for _, r := range rules(t) {
		if r.Alert == "" {
			continue
		}
		alerts++
		if s := r.Labels["severity"]; s != "critical" && s != "warning" {
			t.Errorf("%s: severity %q, want critical or warning", r.Alert, s)
		}
		for _, a := range []string{"summary", "description", "runbook_url"} {
			if strings.TrimSpace(r.Annotations[a]) == "" {
				t.Errorf("%s: no %s", r.Alert, a)
			}
		}
		url := r.Annotations["runbook_url"]
		anchor, ok := strings.CutPrefix(url, runbookPrefix)
		if !ok || !anchors[anchor] {
			t.Errorf("%s: runbook_url %q is not a heading of %s", r.Alert, url, operationsDoc)
		}
		if anchor != strings.ToLower(r.Alert) {
			t.Errorf("%s: runbook_url %q, want the section named by the alert", r.Alert, url)
		}
	}
	if alerts == 0 {
		t.Fatal("no alerts")
	}
}

// headingAnchors returns the anchors GitHub gives the Markdown headings of
// doc: lower case, spaces to hyphens, punctuation other than - and _
// dropped.
func headingAnchors(doc string) map[string]bool {
	out := map[string]bool{}
	for _, line := range strings.Split(doc, "\n") {
		title, ok := strings.CutPrefix(strings.TrimLeft(line, "#"), " ")
		if !ok || !strings.HasPrefix(line, "#") {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(title)) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		out[b.String()] = true
	}
	return out
}

// ruleTests is the part of a promtool test file this test reads.
type ruleTests struct {
	Tests []struct {
		Name          string `json:"name"`
		AlertRuleTest []struct {
			EvalTime  string `json:"eval_time"`
			Alertname string `json:"alertname"`
			ExpAlerts []struct {
				ExpLabels map[string]string `json:"exp_labels"`
			} `json:"exp_alerts"`
		} `json:"alert_rule_test"`
	} `json:"tests"`
}

// TestEveryAlertIsUnitTested: for every alerting rule, the promtool tests
// expect it firing (with the rule's own labels: each window pair of a
// burn alert on its own) and expect its alert quiet somewhere.
func TestEveryAlertIsUnitTested(t *testing.T) {
	var tests ruleTests
	b, err := os.ReadFile(ruleTestsFile)
	if err != nil {
		t.Fatal(err)
	}
	// The test file's other fields (series, promql_expr_test) are
	// promtool's business: decoded leniently.
	if err := yaml.Unmarshal(b, &tests); err != nil {
		t.Fatal(err)
	}
	quiet := map[string]bool{}
	var firing []map[string]string
	for _, tc := range tests.Tests {
		for _, check := range tc.AlertRuleTest {
			if len(check.ExpAlerts) == 0 {
				quiet[check.Alertname] = true
			}
			for _, e := range check.ExpAlerts {
				firing = append(firing, withName(e.ExpLabels, check.Alertname))
			}
		}
	}
	for _, r := range rules(t) {
		if r.Alert == "" {
			continue
		}
		if !quiet[r.Alert] {
			t.Errorf("%s: no test expects it quiet", r.Alert)
		}
		want := withName(r.Labels, r.Alert)
		if !slices.ContainsFunc(firing, func(got map[string]string) bool { return includes(got, want) }) {
			t.Errorf("%s %v: no test expects it firing", r.Alert, r.Labels)
		}
	}
}

func withName(labels map[string]string, name string) map[string]string {
	out := map[string]string{"alertname": name}
	for k, v := range labels {
		out[k] = v
	}
	return out
}

// includes says whether got has every label of want, with its value.
func includes(got, want map[string]string) bool {
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}
