package monitoring

import (
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/facade-dev/facade/metrics"
)

// targetLabels are the labels Prometheus (job, instance) or the
// Prometheus Operator (namespace) put on every scraped series: an
// expression may name them whatever the service exports.
var targetLabels = []string{"job", "instance", "namespace"}

// catalogue maps each metric name to the label names its series carry.
type catalogue map[string][]string

// exported is what the service exports: every collector of
// metrics.New(), read from its description (a histogram as its _bucket,
// with le, _sum and _count series), and the Go and process collectors
// /metrics adds.
func exported(t *testing.T) catalogue {
	t.Helper()
	out := catalogue{}
	m := reflect.ValueOf(metrics.New()).Elem()
	collector := reflect.TypeFor[prometheus.Collector]()
	for i := range m.NumField() {
		f := m.Field(i)
		if !m.Type().Field(i).IsExported() || !f.Type().Implements(collector) {
			continue
		}
		_, histogram := f.Interface().(*prometheus.HistogramVec)
		ch := make(chan *prometheus.Desc, 8)
		go func() { f.Interface().(prometheus.Collector).Describe(ch); close(ch) }()
		for d := range ch {
			name, labels := parseDesc(t, d)
			if !histogram {
				out[name] = labels
				continue
			}
			out[name+"_bucket"] = append(slices.Clone(labels), "le")
			out[name+"_sum"], out[name+"_count"] = labels, labels
		}
	}
	families, err := metrics.New().Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if _, ok := out[f.GetName()]; !ok && !strings.HasPrefix(f.GetName(), "facade_") {
			var names []string
			for _, l := range f.GetMetric()[0].GetLabel() {
				names = append(names, l.GetName())
			}
			out[f.GetName()] = names
		}
	}
	return out
}

var descFields = regexp.MustCompile(`fqName: "([^"]+)".*variableLabels: \{([^}]*)\}`)

// parseDesc reads a collector's name and label names from its
// description, the only place client_golang shows them before a series
// exists.
func parseDesc(t *testing.T, d *prometheus.Desc) (string, []string) {
	t.Helper()
	m := descFields.FindStringSubmatch(d.String())
	if m == nil {
		t.Fatalf("cannot read a metric's name from %s", d)
	}
	var names []string
	for _, l := range strings.Split(m[2], ",") {
		if l = strings.TrimSpace(l); l != "" {
			names = append(names, l)
		}
	}
	return m[1], names
}

// withRecorded adds each recording rule's output and the labels it keeps.
func (c catalogue) withRecorded(t *testing.T) catalogue {
	t.Helper()
	out := catalogue{}
	for k, v := range c {
		out[k] = v
	}
	for _, r := range rules(t) {
		if r.Record != "" {
			out[r.Record] = c.labelsOf(parse(t, r.Expr))
		}
	}
	return out
}

// labelsOf is the label names an expression's result keeps: an
// aggregation's by, a selector's metric's, a binary operation's sides'.
func (c catalogue) labelsOf(e parser.Expr) []string {
	switch e := e.(type) {
	case *parser.AggregateExpr:
		if !e.Without {
			return e.Grouping
		}
	case *parser.VectorSelector:
		return c[e.Name]
	case *parser.MatrixSelector:
		return c.labelsOf(e.VectorSelector)
	case *parser.ParenExpr:
		return c.labelsOf(e.Expr)
	case *parser.BinaryExpr:
		return append(c.labelsOf(e.LHS), c.labelsOf(e.RHS)...)
	case *parser.Call:
		var out []string
		for _, a := range e.Args {
			out = append(out, c.labelsOf(a)...)
		}
		return out
	}
	return nil
}

func parse(t *testing.T, expr string) parser.Expr {
	t.Helper()
	e, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
	if err != nil {
		t.Fatalf("%q: %v", expr, err)
	}
	return e
}

// selector is a series selector of an expression: a metric name and the
// labels it matches on or groups by.
type selector struct {
	name     string
	matchers []*labels.Matcher
}

// selectors returns every vector selector of e.
func selectors(e parser.Expr) []selector {
	var out []selector
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok {
			s := selector{name: vs.Name}
			for _, m := range vs.LabelMatchers {
				if m.Name != labels.MetricName {
					s.matchers = append(s.matchers, m)
				}
			}
			out = append(out, s)
		}
		return nil
	})
	return out
}

// groupings returns, for every aggregation of e with a by clause, the
// labels it groups by and the selectors it aggregates.
func groupings(e parser.Expr) map[*parser.AggregateExpr][]selector {
	out := map[*parser.AggregateExpr][]selector{}
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		if a, ok := n.(*parser.AggregateExpr); ok && !a.Without && len(a.Grouping) > 0 {
			out[a] = selectors(a.Expr)
		}
		return nil
	})
	return out
}

// TestRulesAndPanelsNameOnlyWhatTheServiceExports: every metric a rule
// or a panel of the dashboard names is one the service exports (or a
// recording rule of the rules file), and every label an expression
// matches on or groups by is one that metric carries (or a target label):
// a renamed metric or label cannot leave an alert that never fires or a
// panel that stays empty. The real Prometheus of
// TestPrometheusScrapesTheService checks the same against live series.
func TestRulesAndPanelsNameOnlyWhatTheServiceExports(t *testing.T) {
	known := exported(t).withRecorded(t)
	for _, x := range expressions(t, dashboardJob) {
		e := parse(t, x.expr)
		for _, s := range selectors(e) {
			have, ok := known[s.name]
			if !ok {
				t.Errorf("%s names %s, which the service does not export: %s", x.where, s.name, x.expr)
				continue
			}
			for _, m := range s.matchers {
				if !slices.Contains(have, m.Name) && !slices.Contains(targetLabels, m.Name) {
					t.Errorf("%s matches %s on label %q, which it does not carry (%v)", x.where, s.name, m.Name, have)
				}
			}
		}
		for agg, sels := range groupings(e) {
			var have []string
			for _, s := range sels {
				have = append(have, known[s.name]...)
			}
			for _, l := range agg.Grouping {
				if !slices.Contains(have, l) && !slices.Contains(targetLabels, l) {
					t.Errorf("%s groups by %q, which none of %v carries", x.where, l, sels)
				}
			}
		}
	}
}

// TestDashboardImportsAnywhere: the dashboard names no data source of a
// particular Grafana: every panel and query uses the datasource variable,
// which lists the Prometheus data sources, and the job variable is read
// from that data source.
func TestDashboardImportsAnywhere(t *testing.T) {
	d := loadDashboard(t)
	if d.UID == "" || d.Title == "" {
		t.Errorf("the dashboard has no uid or title")
	}
	vars := map[string]string{}
	for _, v := range d.Templating.List {
		vars[v.Name] = v.Type
		if v.Name == "datasource" && (v.Type != "datasource" || v.Query != datasourceType) {
			t.Errorf("variable datasource is %s of %v, want a datasource variable of %s", v.Type, v.Query, datasourceType)
		}
		if v.Type == "query" && (v.Datasource == nil || v.Datasource.UID != datasourceUID) {
			t.Errorf("variable %s is not read from %s", v.Name, datasourceUID)
		}
	}
	if vars["datasource"] != "datasource" || vars["job"] != "query" {
		t.Errorf("variables %v, want datasource and job", vars)
	}
	panels := d.queryPanels()
	if len(panels) < 10 {
		t.Fatalf("%d panels", len(panels))
	}
	for _, p := range panels {
		if p.Datasource == nil || p.Datasource.UID != datasourceUID || p.Datasource.Type != datasourceType {
			t.Errorf("panel %q: data source %+v, want %s", p.Title, p.Datasource, datasourceUID)
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, target := range p.Targets {
			if target.Datasource != nil && target.Datasource.UID != datasourceUID {
				t.Errorf("panel %q: a query's data source is %+v", p.Title, target.Datasource)
			}
			if !strings.Contains(target.Expr, `job=~"$job"`) {
				t.Errorf("panel %q: %s does not follow the job variable", p.Title, target.Expr)
			}
		}
	}
}
