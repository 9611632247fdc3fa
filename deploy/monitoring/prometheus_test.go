package monitoring

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"sigs.k8s.io/yaml"
)

// The real Prometheus's timing: it scrapes and evaluates every second,
// and the test's copy of the rules lets FacadeRedisUnreachable fire after
// redisFor instead of the shipped minute (nothing else is changed).
const (
	scrapeInterval = time.Second
	redisFor       = 5 * time.Second
	testJob        = "facade"
)

// TestPrometheusScrapesTheService runs Debian's Prometheus against a
// running `facade serve` with the shipped rules while the test drives
// traffic: every series a rule or a panel selects is there (its metric,
// with the labels and values it matches on and groups by), every panel's
// query returns data, and stopping Redis fires FacadeRedisUnreachable
// within its `for` plus two scrape intervals; it resolves once Redis is
// back (docs/operations.md, "Monitoring").
func TestPrometheusScrapesTheService(t *testing.T) {
	promBin := tool(t, "prometheus")
	s := startService(t)
	prom := startPrometheus(t, promBin, s.ops)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s.traffic(ctx, t)

	t.Run("every selected series is there", func(t *testing.T) {
		for _, x := range expressions(t, testJob) {
			e := parse(t, x.expr)
			for _, sel := range selectors(e) {
				prom.waitSeries(t, x.where, sel)
			}
			for agg, sels := range groupings(e) {
				prom.checkGrouping(t, x.where, agg, sels)
			}
		}
	})
	t.Run("every panel shows data", func(t *testing.T) {
		for _, p := range loadDashboard(t).queryPanels() {
			for _, target := range p.Targets {
				prom.waitData(t, p.Title, grafanaVars(target.Expr, testJob))
			}
		}
	})
	cancel() // the Redis alert needs no traffic: facade_redis_up is asked at each scrape
	t.Run("Redis stopped fires FacadeRedisUnreachable; back, it resolves", func(t *testing.T) {
		prom.waitAlert(t, "FacadeRedisUnreachable", "", 3*time.Second) // quiet while Redis answers
		s.redis.Stop()
		stopped := time.Now()
		prom.waitAlert(t, "FacadeRedisUnreachable", "firing", redisFor+2*scrapeInterval)
		t.Logf("FacadeRedisUnreachable fired %v after Redis stopped (for: %v, scrape interval %v)",
			time.Since(stopped).Round(10*time.Millisecond), redisFor, scrapeInterval)
		if err := s.redis.Restart(); err != nil {
			t.Fatal(err)
		}
		back := time.Now()
		prom.waitAlert(t, "FacadeRedisUnreachable", "", 2*scrapeInterval+time.Second)
		t.Logf("it resolved %v after Redis was back", time.Since(back).Round(10*time.Millisecond))
	})
	if t.Failed() {
		t.Logf("facade's log:\n%s", s.logs)
	}
}

type promServer struct {
	base string
	logs *lockedBuffer
}

// startPrometheus runs Debian's Prometheus on a free loopback port with
// its own storage, scraping the service's ops address and evaluating a
// copy of the rules file (redisFor as the Redis alert's `for`).
func startPrometheus(t *testing.T, bin, target string) *promServer {
	t.Helper()
	dir := t.TempDir()
	rulesPath := filepath.Join(dir, "facade.rules.yaml")
	writeFile(t, rulesPath, rulesWithRedisFor(t, redisFor))
	config := filepath.Join(dir, "prometheus.yml")
	writeFile(t, config, fmt.Sprintf(`global:
  scrape_interval: %[1]s
  scrape_timeout: %[1]s
  evaluation_interval: %[1]s
rule_files: [%[2]q]
scrape_configs:
  - job_name: %[3]s
    static_configs:
      - targets: [%[4]q]
`, model(scrapeInterval), rulesPath, testJob, target))
	p := &promServer{base: "http://" + freeAddr(t), logs: &lockedBuffer{}}
	cmd := exec.Command(bin, "--config.file="+config, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+p.base[len("http://"):], "--log.level=warn")
	cmd.Stdout, cmd.Stderr = p.logs, p.logs
	startProcess(t, cmd)
	waitOK(t, p.base+"/-/ready", p.logs)
	return p
}

func model(d time.Duration) string { return strconv.Itoa(int(d.Seconds())) + "s" }

// rulesWithRedisFor is the rules file with FacadeRedisUnreachable's `for`
// set to d, the rest as shipped.
func rulesWithRedisFor(t *testing.T, d time.Duration) string {
	t.Helper()
	b, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, g := range doc["groups"].([]any) {
		for _, r := range g.(map[string]any)["rules"].([]any) {
			if r := r.(map[string]any); r["alert"] == "FacadeRedisUnreachable" {
				r["for"], found = model(d), true
			}
		}
	}
	if !found {
		t.Fatal("no FacadeRedisUnreachable in the rules")
	}
	out, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// api GETs a Prometheus HTTP API path and decodes its data.
func (p *promServer) api(t *testing.T, path string, q url.Values, data any) {
	t.Helper()
	res, err := http.Get(p.base + path + "?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body struct {
		Status, Error string
		Data          json.RawMessage
	}
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil || body.Status != "success" {
		t.Fatalf("%s %v: %d %v %s", path, q, res.StatusCode, err, body.Error)
	}
	if err := json.Unmarshal(body.Data, data); err != nil {
		t.Fatal(err)
	}
}

// series returns the label sets of the series match selects.
func (p *promServer) series(t *testing.T, match string) []map[string]string {
	t.Helper()
	var out []map[string]string
	p.api(t, "/api/v1/series", url.Values{"match[]": {match}, "start": {strconv.FormatInt(time.Now().Add(-time.Hour).Unix(), 10)}}, &out)
	return out
}

// waitSeries waits (30 s at most) until the selector, exactly as written,
// selects a series: its metric exists with the labels and values it
// matches on.
func (p *promServer) waitSeries(t *testing.T, where string, sel selector) {
	t.Helper()
	match := sel.String()
	deadline := time.Now().Add(30 * time.Second)
	for len(p.series(t, match)) == 0 {
		if time.Now().After(deadline) {
			t.Errorf("%s: Prometheus has no series %s (of %s: %v)", where, match, sel.name, p.series(t, sel.name))
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// checkGrouping: the series an aggregation sums carry every label it
// groups by (but namespace, which only the Prometheus Operator adds).
func (p *promServer) checkGrouping(t *testing.T, where string, agg *parser.AggregateExpr, sels []selector) {
	t.Helper()
	for _, l := range agg.Grouping {
		if l == "namespace" {
			continue
		}
		found := false
		for _, sel := range sels {
			found = found || slices.ContainsFunc(p.series(t, sel.String()), func(s map[string]string) bool { _, ok := s[l]; return ok })
		}
		if !found {
			t.Errorf("%s: no series of %v carries %q, which %s groups by", where, sels, l, agg)
		}
	}
}

// waitData waits (30 s at most) until expr returns at least one number.
func (p *promServer) waitData(t *testing.T, panel, expr string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var data struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		}
		p.api(t, "/api/v1/query", url.Values{"query": {expr}}, &data)
		for _, r := range data.Result {
			if v, err := strconv.ParseFloat(fmt.Sprint(r.Value[1]), 64); err == nil && !math.IsNaN(v) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Errorf("panel %q shows no data: %s", panel, expr)
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitAlert waits until alertname is in state ("firing"; "" for absent:
// neither pending nor firing) and fails if that takes longer than within.
func (p *promServer) waitAlert(t *testing.T, alertname, state string, within time.Duration) {
	t.Helper()
	start := time.Now()
	for {
		var data struct {
			Alerts []struct {
				Labels map[string]string
				State  string
			}
		}
		p.api(t, "/api/v1/alerts", nil, &data)
		got := ""
		for _, a := range data.Alerts {
			if a.Labels["alertname"] == alertname {
				got = a.State
			}
		}
		if got == state {
			return
		}
		if time.Since(start) > within {
			t.Fatalf("%s is %q after %v, want %q\nPrometheus's log:\n%s", alertname, got, time.Since(start), state, p.logs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// withName is the selector's matchers with its metric name among them.
func (s selector) withName() []*labels.Matcher {
	return append([]*labels.Matcher{labels.MustNewMatcher(labels.MatchEqual, labels.MetricName, s.name)}, s.matchers...)
}

func (s selector) String() string {
	return (&parser.VectorSelector{Name: s.name, LabelMatchers: s.withName()}).String()
}
