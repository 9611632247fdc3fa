package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/facade-dev/facade/authz/grantusage"
	"github.com/facade-dev/facade/authz/policytool"
	"github.com/facade-dev/facade/redisdb"
)

// usageReadTimeout bounds a tool's reading of usage from Redis.
const usageReadTimeout = 30 * time.Second

// usage lists every policy line with its uses and last use in the window
// (docs/policy.md, "Which lines are used").
func (t *policyTool) usage() int {
	window, err := parseWindow(*t.since)
	if err != nil {
		return t.fail(err)
	}
	p, code := t.open(*t.policy)
	if p == nil {
		return code
	}
	rdb, err := redisdb.Open(t.settings.redisConfig())
	if errors.Is(err, redisdb.ErrNotConfigured) {
		return t.fail(errors.New("usage is kept in Redis: set FACADE_REDIS_URL (or FACADE_REDIS_ADDRS) as the service has it"))
	} else if err != nil {
		return t.fail(err)
	}
	defer rdb.Close()
	ctx, cancel := context.WithTimeout(context.Background(), usageReadTimeout)
	defer cancel()
	now := time.Now()
	u, err := grantusage.ReadUsage(ctx, rdb, now, window)
	if err != nil {
		return t.fail(err)
	}
	lines := p.LinesUsed(u)
	total, unused := len(lines), 0
	for _, l := range lines {
		if l.Uses == 0 {
			unused++
		}
	}
	if *t.unused {
		lines = lines[:unused] // LinesUsed puts them first
	}
	if err := t.writeUsage(lines, unused, total, u.Since); err != nil {
		return t.fail(err)
	}
	if *t.unused && unused > 0 {
		return 1
	}
	return 0
}

func (t *policyTool) writeUsage(lines []policytool.LineUse, unused, total int, since time.Time) error {
	switch *t.format {
	case "json":
		if lines == nil {
			lines = []policytool.LineUse{}
		}
		enc := json.NewEncoder(t.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(lines)
	case "csv":
		w := csv.NewWriter(t.stdout)
		w.Write([]string{"file", "line", "uses", "last_used", "text"}) //nolint:errcheck // checked by Flush
		for _, l := range lines {
			w.Write([]string{l.File, strconv.Itoa(l.Line), strconv.FormatUint(l.Uses, 10), timeOrEmpty(l.LastUsed), l.Text}) //nolint:errcheck // checked by Flush
		}
		w.Flush()
		return w.Error()
	}
	tw := tabwriter.NewWriter(t.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "line\tuses\tlast used\tpolicy line")
	for _, l := range lines {
		last := timeOrEmpty(l.LastUsed)
		if last == "" {
			last = "never"
		}
		fmt.Fprintf(tw, "%s:%d\t%d\t%s\t%s\n", l.File, l.Line, l.Uses, last, l.Text)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(t.stdout, "%d of %d lines unused since %s (UTC days)\n", unused, total, since.UTC().Format(time.DateOnly))
	return err
}

// attachLastUse gives the report's rows their last use when Redis is
// configured; without it the column stays empty.
func (t *policyTool) attachLastUse(p *policytool.Policy) error {
	rdb, err := redisdb.Open(t.settings.redisConfig())
	if errors.Is(err, redisdb.ErrNotConfigured) {
		return nil
	} else if err != nil {
		return err
	}
	defer rdb.Close()
	ctx, cancel := context.WithTimeout(context.Background(), usageReadTimeout)
	defer cancel()
	u, err := grantusage.ReadLastUse(ctx, rdb)
	if err != nil {
		return err
	}
	p.AttachUsage(u)
	return nil
}

// parseWindow reads --since: whole days ("90d") or a Go duration ("36h"),
// at most grantusage.MaxWindow.
func parseWindow(v string) (time.Duration, error) {
	var d time.Duration
	if days, ok := strings.CutSuffix(v, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n < 0 || n > 100_000 { // past 100,000 days the product overflows nothing, and is refused below
			return 0, fmt.Errorf("--since %q: a number of days such as 90d, or a duration such as 36h", v)
		}
		d = time.Duration(n) * 24 * time.Hour
	} else {
		var err error
		if d, err = time.ParseDuration(v); err != nil {
			return 0, fmt.Errorf("--since %q: a number of days such as 90d, or a duration such as 36h", v)
		}
	}
	if d <= 0 || d > grantusage.MaxWindow {
		return 0, fmt.Errorf("--since %q: from 1s to %dd (usage is kept that long)", v, grantusage.MaxWindow/(24*time.Hour))
	}
	return d, nil
}

// timeOrEmpty is t in RFC 3339 (UTC), or "" for none.
func timeOrEmpty(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}
