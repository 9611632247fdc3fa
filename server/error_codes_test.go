package server_test

import (
	"encoding/json"
	"html"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/accounts"
	"github.com/facade-dev/facade/internal/testkit/testredis"
	"github.com/facade-dev/facade/server/problem"
	"github.com/facade-dev/facade/web"
)

// wireCodes lists the table's codes as clients see them, and the "code
// rule" pairs of the rules its input codes report.
func wireCodes() (codes, rules []string) {
	for _, c := range problem.Codes() {
		codes = append(codes, problem.Wire(c))
		for _, r := range problem.Reasons(c) {
			rules = append(rules, problem.Wire(c)+" "+problem.Wire(r))
		}
	}
	return codes, rules
}

// unproducedCodes lists the table's codes (and rules) that no test of the
// run received in a problem body: a code no test can provoke is either
// dead or untested. It also lists an exemption that a test did receive
// (then the exemption is stale).
func unproducedCodes() []string {
	codes, rules := wireCodes()
	var missing []string
	for _, c := range append(codes, rules...) {
		_, seen := codesSeen.Load(c)
		if _, exempt := answeredOutsideHTTP[c]; seen == exempt {
			missing = append(missing, c)
		}
	}
	return missing
}

// answeredOutsideHTTP are the table's codes no request can meet, each with
// where it is produced and tested instead.
var answeredOutsideHTTP = map[string]string{
	"unknown-currency":  "only account creation refuses it (facade seed; accounts' store tests)",
	"duplicate-student": "a gradebook row's code, never a request's (TestGradebookUploadDryRunThenApply)",
}

// problemBody is a problem as a client decodes it.
type problemBody struct {
	Type, Code, Detail string
	Errors             []struct{ Parameter, Code, Detail string }
	ErrorMessages      []string `json:"errorMessages"`
}

func decodeProblem(t testing.TB, r resp) problemBody {
	t.Helper()
	var p problemBody
	if err := json.Unmarshal([]byte(r.body), &p); err != nil {
		t.Fatalf("not a problem: %d %s", r.status, r.body)
	}
	return p
}

// checkErrorMessages: an error on a Bamboo route (the read API, the
// artifact downloads) carries errorMessages [detail], the member Atlassian
// clients display; on the other routes it carries none.
func checkErrorMessages(t testing.TB, path string, r resp) {
	t.Helper()
	var p problemBody
	if json.Unmarshal([]byte(r.body), &p) != nil {
		return // checkProblem reports it
	}
	bamboo := strings.HasPrefix(path, "/rest/api/") || strings.HasPrefix(path, "/browse/") || strings.HasPrefix(path, "/download/")
	if bamboo != (len(p.ErrorMessages) > 0) || bamboo && !slices.Equal(p.ErrorMessages, []string{p.Detail}) {
		t.Errorf("%s: errorMessages %q for a %s route, detail %q", path, p.ErrorMessages,
			map[bool]string{true: "Bamboo", false: "non-Bamboo"}[bamboo], p.Detail)
	}
}

// wantInvalid sends r and wants a 400 of code whose errors list names
// exactly parameter with rule.
func wantInvalid(t *testing.T, e *env, name string, r req, code, parameter, rule string) problemBody {
	t.Helper()
	res := e.do(r)
	p := decodeProblem(t, res)
	if res.status != 400 || p.Code != code || len(p.Errors) != 1 ||
		p.Errors[0].Parameter != parameter || p.Errors[0].Code != rule {
		t.Errorf("%s: %d %s; want 400 %s naming %s %s", name, res.status, res.body, code, parameter, rule)
	}
	return p
}

// TestEveryAmountMistakeSaysWhichRuleItBroke: each way of writing an
// amount wrong gets its own rule in errors, before any money moves.
func TestEveryAmountMistakeSaysWhichRuleItBroke(t *testing.T) {
	e := newEnv(t)
	seedAccounts(t, e)
	alice := token(t, "alice", "customer")
	for amount, rule := range map[string]string{
		"-5":                   "not-positive",
		"-0.50":                "not-positive",
		"007":                  "leading-zero",
		"00.5":                 "leading-zero",
		"+5":                   "malformed",
		"1e3":                  "malformed",
		"5,00":                 "malformed",
		"abc":                  "malformed",
		"NaN":                  "malformed",
		"%EF%BC%95":            "malformed", // full-width 5
		"05":                   "leading-zero",
		"0.001":                "too-precise", // EUR has 2 decimals: known once the account is read
		"0.0001":               "too-precise", // no currency has 4
		"0":                    "not-positive",
		"0.00":                 "not-positive",
		"2000000":              "over-limit",
		"1000000.01":           "over-limit",
		"99999999999999999999": "over-limit", // digits: over the limit however many
		"1000000000000000.5":   "over-limit",
	} {
		wantInvalid(t, e, "amount "+amount,
			req{method: "POST", path: "/rs/transfer/from/1001/to/2002/amount/" + amount, token: alice},
			"bad-amount", "amount", rule)
	}
	if got := balance(t, e, "1001"); got != "250.00" {
		t.Errorf("refused amounts moved money: balance %s", got)
	}
}

// TestIfMatchWithoutQuotesSaysToQuoteIt: the commonest If-Match slip gets
// its own rule and a sentence that says what to send.
func TestIfMatchWithoutQuotesSaysToQuoteIt(t *testing.T) {
	e := newEnv(t)
	seedGrades(t, e)
	bob := token(t, "bob", "professor")
	put := func(ifMatch string) req {
		return req{method: "PUT", path: "/student/alice/english/grade", token: bob, body: `{"grade":"A"}`,
			header: map[string]string{"If-Match": ifMatch}}
	}
	p := wantInvalid(t, e, "If-Match: 1", put("1"), "bad-if-match", "If-Match", "unquoted")
	if len(p.Errors) == 1 && !strings.Contains(p.Errors[0].Detail, `"3"`) {
		t.Errorf("the unquoted rule's sentence does not show a quoted tag: %q", p.Errors[0].Detail)
	}
	wantInvalid(t, e, `If-Match: "01"`, put(`"01"`), "bad-if-match", "If-Match", "malformed")
	wantInvalid(t, e, `If-Match: "1", "2"`, put(`"1", "2"`), "bad-if-match", "If-Match", "malformed")
}

// TestGradeAndPagingMistakesNameTheirParameter covers the other input
// rules: a grade off the scale, and the paging parameters of the
// service's own lists and of the Bamboo lists.
func TestGradeAndPagingMistakesNameTheirParameter(t *testing.T) {
	e := newEnv(t, withBuilds())
	seedGrades(t, e)
	seedAccounts(t, e)
	bob, alice, carol := token(t, "bob", "professor"), token(t, "alice", "customer"), token(t, "carol", "developer")
	for _, g := range []string{`{"grade":"Z"}`, `{"grade":"a+"}`, `{"grade":null}`, `{}`} {
		wantInvalid(t, e, "grade "+g, req{method: "PUT", path: "/student/alice/english/grade", token: bob, body: g},
			"bad-grade", "grade", "not-on-scale")
	}
	for _, c := range []struct{ path, parameter, rule string }{
		{"/rs/account/1001/transfers?limit=0", "limit", "out-of-range"},
		{"/rs/account/1001/transfers?limit=abc", "limit", "malformed"},
		{"/rs/account/1001/transfers?limit=010", "limit", "malformed"},
		{"/class/english-101/grades?start=-1", "start", "out-of-range"},
		{"/class/english-101/grades?start=x", "start", "malformed"},
		{"/class/english-101/grades?limit=101", "limit", "out-of-range"},
		{"/rest/api/latest/project?max-results=0", "max-results", "out-of-range"},
		{"/rest/api/latest/result/PROJ-CORE?start-index=1e3", "start-index", "malformed"},
	} {
		tok := alice
		if strings.HasPrefix(c.path, "/class/") {
			tok = bob
		} else if strings.HasPrefix(c.path, "/rest/") {
			tok = carol
		}
		wantInvalid(t, e, c.path, req{method: "GET", path: c.path, token: tok}, "bad-parameter", c.parameter, c.rule)
	}
}

// TestBambooErrorsCarryErrorMessages: what atlassian-python-api shows for
// a refused filter is errorMessages (env.do checks every error body; this
// names the case from the issue).
func TestBambooErrorsCarryErrorMessages(t *testing.T) {
	e := newEnv(t, withBuilds())
	carol := token(t, "carol", "developer")
	r := e.do(req{method: "GET", path: "/rest/api/latest/result/PROJ-CORE?favourite=maybe", token: carol})
	p := decodeProblem(t, r)
	if r.status != 400 || p.Code != "bad-filter-favourite" || !slices.Equal(p.ErrorMessages, []string{p.Detail}) {
		t.Errorf("favourite: %d %s", r.status, r.body)
	}
	for _, path := range []string{"/rest/api/latest/project", "/download/PROJ-CORE-JOB1/build_logs/x.log"} {
		r := e.do(req{method: "GET", path: path})
		if p := decodeProblem(t, r); r.status != 401 || len(p.ErrorMessages) != 1 {
			t.Errorf("%s without a token: %d %s", path, r.status, r.body)
		}
	}
	if p := decodeProblem(t, e.do(req{method: "GET", path: "/rs/account/1001"})); p.ErrorMessages != nil {
		t.Errorf("errorMessages outside the Bamboo routes: %v", p.ErrorMessages)
	}
}

// TestEveryCodeHasItsPageAndIsDescribed: each code of the table has a
// page at its type, served without a token under the page's CSP and
// saying the code's sentence, and the OpenAPI document lists exactly the
// table's codes and rules.
func TestEveryCodeHasItsPageAndIsDescribed(t *testing.T) {
	e := newEnv(t)
	codes, rules := wireCodes()
	for _, c := range problem.Codes() {
		wire := problem.Wire(c)
		r := e.do(req{method: "GET", path: "/problems/" + wire})
		if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") ||
			r.header.Get("Content-Security-Policy") != web.CSP || r.header.Get("ETag") == "" {
			t.Errorf("/problems/%s: %d %v", wire, r.status, r.header)
			continue
		}
		h, _, _ := renderCode(c)
		if !strings.Contains(r.body, "<h1>"+wire+"</h1>") || !strings.Contains(html.UnescapeString(r.body), h) {
			t.Errorf("/problems/%s does not describe its code: %s", wire, r.body)
		}
		if m := leakPatterns.FindString(r.body); m != "" {
			t.Errorf("/problems/%s leaks %q", wire, m)
		}
		for _, reason := range problem.Reasons(c) {
			if !strings.Contains(r.body, "<code>"+problem.Wire(reason)+"</code>") {
				t.Errorf("/problems/%s does not list its rule %s", wire, reason)
			}
		}
	}
	index := e.do(req{method: "GET", path: "/problems/"})
	for _, c := range codes {
		if !strings.Contains(index.body, `href="/problems/`+c+`"`) {
			t.Errorf("/problems/ does not link %s", c)
		}
	}
	if r := e.do(req{method: "GET", path: "/problems/no-such-code"}); r.status != 404 || decodeProblem(t, r).Code != "not-found" {
		t.Errorf("/problems/no-such-code: %d %s", r.status, r.body)
	}
	d, err := openAPI()
	if err != nil {
		t.Fatal(err)
	}
	enum := func(v []any) []string {
		var out []string
		for _, s := range v {
			out = append(out, s.(string))
		}
		slices.Sort(out)
		return out
	}
	if got := enum(d.doc.Components.Schemas["ProblemCode"].Value.Enum); !slices.Equal(got, codes) {
		t.Errorf("ProblemCode's enum in /openapi.json is not the table's codes:\n got  %v\n want %v", got, codes)
	}
	var ruleNames []string
	for _, r := range rules {
		_, name, _ := strings.Cut(r, " ")
		if !slices.Contains(ruleNames, name) {
			ruleNames = append(ruleNames, name)
		}
	}
	slices.Sort(ruleNames)
	if got := enum(d.doc.Components.Schemas["ProblemItem"].Value.Properties["code"].Value.Enum); !slices.Equal(got, ruleNames) {
		t.Errorf("ProblemItem's code enum in /openapi.json is not the table's rules:\n got  %v\n want %v", got, ruleNames)
	}
}

// renderCode renders code's problem: the sentence its page must show, its
// status, its WWW-Authenticate.
func renderCode(code facade.Code) (detail string, status int, challenge string) {
	h := http.Header{}
	status, b := problem.Render(h, &facade.Error{Code: code}, "")
	var p problemBody
	_ = json.Unmarshal(b, &p)
	return p.Detail, status, h.Get("WWW-Authenticate")
}

// TestEveryBambooFilterRefusalNamesItsFilter: each refused result-list
// filter has its own code, so a client learns which one.
func TestEveryBambooFilterRefusalNamesItsFilter(t *testing.T) {
	e := newEnv(t, withBuilds())
	carol := token(t, "carol", "developer")
	for query, code := range map[string]string{
		"/result/PROJ-CORE?label=no%20spaces":    "bad-filter-label",
		"/result/PROJ-CORE?issueKey=not-a-key!":  "bad-filter-issue-key",
		"/result/PROJ-CORE?buildstate=Green":     "bad-filter-buildstate",
		"/result/PROJ-CORE?includeAllStates=yes": "bad-filter-include-all-states",
		"/result/PROJ-CORE?continuable=yes":      "bad-filter-continuable",
		"/result?cloverEnabled=yes":              "bad-filter-clover-enabled",
		"/result/PROJ-CORE?favourite=maybe":      "bad-filter-favourite",
	} {
		r := e.do(req{method: "GET", path: "/rest/api/latest" + query, token: carol})
		if p := decodeProblem(t, r); r.status != 400 || p.Code != code {
			t.Errorf("%s: %d %s, want 400 %s", query, r.status, r.body, code)
		}
	}
	if n := e.bamboo.CallCount("/"); n != 0 {
		t.Errorf("refused filters made %d upstream calls", n)
	}
}

// TestRareCausesAnswerWithTheirCodes provokes the causes no ordinary
// request meets: a breaker that opened, money the store cannot hold or
// does not know, a currency mismatch, and a store that refuses writes.
func TestRareCausesAnswerWithTheirCodes(t *testing.T) {
	ctx := t.Context()
	e := newEnv(t, withBuilds())
	seedAccounts(t, e)
	holder, carol := token(t, "alice", "customer"), token(t, "carol", "developer")
	want := func(name string, r resp, status int, code string) {
		t.Helper()
		if p := decodeProblem(t, r); r.status != status || p.Code != code {
			t.Errorf("%s: %d %s, want %d %s", name, r.status, r.body, status, code)
		}
	}

	// The breaker opens after consecutive upstream failures; each request
	// names another result, so no cached copy can answer.
	e.bamboo.SetFailing(500)
	var r resp
	for n := 1; n <= 30; n++ {
		if r = e.do(req{method: "GET", path: "/rest/api/latest/result/PROJ-CORE-" + strconv.Itoa(n), token: carol}); r.status == 503 {
			break
		}
	}
	e.bamboo.SetFailing(0)
	want("breaker open", r, 503, "upstream-open")

	// ghost-acct may receive from 1001 (testPolicy) but holds yen.
	if _, err := accounts.NewStore(e.rdb, accounts.Config{Log: quietLog}).Seed(ctx, accounts.SeedAccount{ID: "ghost-acct", Owner: "x", Currency: "JPY", Balance: "0"}); err != nil {
		t.Fatal(err)
	}
	want("currency mismatch", e.do(req{method: "POST", path: "/rs/transfer/from/1001/to/ghost-acct/amount/1", token: holder}), 422, "currency-mismatch")

	// A hand-edited balance (the layout is in accounts/keys.go) that no
	// transfer may add to: no seed or transfer can write one this large.
	if err := e.rdb.HSet(ctx, "facade:accounts:{money}:account:2002", "balance", "9200000000000000000").Err(); err != nil {
		t.Fatal(err)
	}
	want("balance limit", e.do(req{method: "POST", path: "/rs/transfer/from/1001/to/2002/amount/20", token: holder}), 422, "balance-limit")

	// A store that answers but refuses every write: an unexpected
	// failure, a 500 that says nothing of it.
	full := testredis.Start(t, testredis.Options{})
	rdb := full.Client(t)
	f := newEnv(t, withRedis(rdb))
	if err := rdb.ConfigSet(ctx, "maxmemory-policy", "noeviction").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.ConfigSet(ctx, "maxmemory", "1").Err(); err != nil {
		t.Fatal(err)
	}
	want("store refuses writes", f.do(req{method: "POST", path: "/student/ghost/english/grade", token: token(t, "bob", "professor"), body: `{"grade":"A"}`}), 500, "internal")
}
