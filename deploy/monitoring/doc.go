// Package monitoring holds the tests of the monitoring the service ships
// (docs/operations.md, "Monitoring"): the Prometheus rules in
// ../prometheus (promtool's check and unit tests, the labels and runbook
// links every alert carries), the Grafana dashboard in ../grafana, the
// metric names both read, and a real Prometheus scraping a running
// facade. It is a package of the deploy module so that Prometheus's own
// Go packages (its PromQL parser) stay out of the service's module.
package monitoring
