package server_test

import (
	"strings"
	"testing"
)

// A plan's builds over time are refused as every plan route is: the key
// and ?last first (400), then view on the plan or its project from the
// identifiers alone (403, byte for byte the same whether the plan exists),
// then the data (404 for a plan Bamboo does not have); nothing refused
// reaches Bamboo. env.do validates every answer against /openapi.json.
func TestBuildHistoryIsRefusedAsEveryPlanRoute(t *testing.T) {
	e := newEnv(t, withBuilds())
	carol := token(t, "carol", "developer") // PROJ (team:platform) and WEB-NIGHTLY
	for _, view := range []string{"tests", "trend"} {
		e.bamboo.ResetCalls()
		for path, want := range map[string]struct {
			status     int
			code, what string
		}{
			"/builds/proj-core/" + view:               {400, "bad-identifier", "planKey"},
			"/builds/PROJ-CORE%2F../" + view:          {400, "bad-identifier", "planKey"},
			"/builds/PROJ-CORE/" + view + "?last=0":   {400, "bad-parameter", "last"},
			"/builds/PROJ-CORE/" + view + "?last=101": {400, "bad-parameter", "last"},
			"/builds/PROJ-CORE/" + view + "?last=x":   {400, "bad-parameter", "last"},
			"/builds/WEB-PR/" + view + "?last=x":      {400, "bad-parameter", "last"}, // input before authorization
		} {
			r := e.do(req{method: "GET", path: path, token: carol})
			p := r.problem(t)
			errs, _ := p["errors"].([]any)
			first, _ := firstItem(errs).(map[string]any)
			if r.status != want.status || p["code"] != want.code || first["parameter"] != want.what {
				t.Errorf("GET %s: %d %v %v, want %d %s naming %s", path, r.status, p["code"], errs, want.status, want.code, want.what)
			}
		}
		var refusals []string
		for _, path := range []string{"/builds/WEB-PR/" + view, "/builds/NOPE-NOPE/" + view + "?last=5"} {
			r := e.do(req{method: "GET", path: path, token: carol, header: map[string]string{"X-Request-ID": "fixed"}})
			if r.status != 403 {
				t.Errorf("GET %s: %d, want 403", path, r.status)
			}
			refusals = append(refusals, r.body)
		}
		if refusals[0] != refusals[1] {
			t.Errorf("refusals differ:\n%s", strings.Join(refusals, "\n"))
		}
		if n := e.bamboo.CallCount("/"); n != 0 {
			t.Errorf("%s: %d upstream calls for refused requests", view, n)
		}
		if r := e.do(req{method: "GET", path: "/builds/PROJ-NOSUCH/" + view, token: carol}); r.status != 404 {
			t.Errorf("allowed, absent plan: %d %s", r.status, r.body)
		}
		for _, path := range []string{"/builds/PROJ-CORE/" + view, "/builds/WEB-NIGHTLY/" + view + "?last=100"} {
			if r := e.do(req{method: "GET", path: path, token: carol}); r.status != 200 || !strings.Contains(r.body, `"builds":[{"number":`) {
				t.Errorf("GET %s: %d %.300s", path, r.status, r.body)
			}
		}
	}
	if !strings.Contains(e.logs.String(), `"op":"view_build_tests","target":"plan:NOPE-NOPE"`) {
		t.Errorf("no audit line for the refused tests in:\n%s", e.logs)
	}
}

func firstItem(l []any) any {
	if len(l) == 0 {
		return nil
	}
	return l[0]
}
