package monitoring

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// The files under test, from this package's directory.
const (
	rulesFile      = "../prometheus/facade.rules.yaml"
	ruleTestsFile  = "../prometheus/tests/facade.rules.test.yaml"
	dashboardFile  = "../grafana/facade.json"
	operationsDoc  = "../../docs/operations.md"
	runbookPrefix  = "https://github.com/facade-dev/facade/blob/main/docs/operations.md#"
	rateInterval   = "1m" // what the tests put for Grafana's $__rate_interval
	dashboardJob   = "facade"
	datasourceUID  = "${datasource}"
	datasourceType = "prometheus"
)

// rule is one recording or alerting rule of a PrometheusRule's groups.
type rule struct {
	Record      string            `json:"record"`
	Alert       string            `json:"alert"`
	Expr        string            `json:"expr"`
	For         string            `json:"for"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

type ruleGroups struct {
	Groups []struct {
		Name  string `json:"name"`
		Rules []rule `json:"rules"`
	} `json:"groups"`
}

// rules returns every rule of the rules file, decoded strictly (a field
// Prometheus does not know fails here, as it would at load).
func rules(t *testing.T) []rule {
	t.Helper()
	var g ruleGroups
	readYAML(t, rulesFile, &g)
	var out []rule
	for _, group := range g.Groups {
		out = append(out, group.Rules...)
	}
	if len(out) == 0 {
		t.Fatalf("%s holds no rules", rulesFile)
	}
	return out
}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// dashboard is the part of a Grafana dashboard the tests read.
type dashboard struct {
	UID        string  `json:"uid"`
	Title      string  `json:"title"`
	Panels     []panel `json:"panels"`
	Templating struct {
		List []struct {
			Name       string      `json:"name"`
			Type       string      `json:"type"`
			Query      any         `json:"query"`
			Datasource *datasource `json:"datasource"`
		} `json:"list"`
	} `json:"templating"`
}

type datasource struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

type panel struct {
	Type       string      `json:"type"`
	Title      string      `json:"title"`
	Datasource *datasource `json:"datasource"`
	Panels     []panel     `json:"panels"` // a collapsed row's
	Targets    []struct {
		Expr       string      `json:"expr"`
		Datasource *datasource `json:"datasource"`
	} `json:"targets"`
}

func loadDashboard(t *testing.T) dashboard {
	t.Helper()
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := yaml.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	return d
}

// panels returns every panel that queries, rows' panels included.
func (d dashboard) queryPanels() []panel {
	var out []panel
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			if p.Type == "row" {
				walk(p.Panels)
				continue
			}
			out = append(out, p)
		}
	}
	walk(d.Panels)
	return out
}

// expression is one PromQL expression of the rules or the dashboard,
// with where it comes from.
type expression struct {
	where, expr string
}

// expressions returns every expression of the rules file and of the
// dashboard's panels, Grafana's variables replaced as Grafana would
// ($job by job).
func expressions(t *testing.T, job string) []expression {
	t.Helper()
	var out []expression
	for _, r := range rules(t) {
		out = append(out, expression{filepath.Base(rulesFile) + " " + r.Record + r.Alert, r.Expr})
	}
	for _, p := range loadDashboard(t).queryPanels() {
		for _, target := range p.Targets {
			out = append(out, expression{"panel " + p.Title, grafanaVars(target.Expr, job)})
		}
	}
	return out
}

func grafanaVars(expr, job string) string {
	return strings.NewReplacer("$__rate_interval", rateInterval, "$job", job).Replace(expr)
}
