package server_test

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/facade-dev/facade/accounts"
	"github.com/facade-dev/facade/api"
	"github.com/facade-dev/facade/grades"
	"github.com/facade-dev/facade/proxy"
	"github.com/facade-dev/facade/server"
)

// openAPI is the served description, loaded and validated once per test
// binary, with the router that finds a request's operation in it.
var openAPI = sync.OnceValues(func() (*openAPIDoc, error) {
	// The page's files are text; kin-openapi decodes JSON and plain text
	// out of the box.
	for _, ct := range []string{"text/html", "text/javascript", "text/css", "text/csv", "image/svg+xml"} {
		openapi3filter.RegisterBodyDecoder(ct, openapi3filter.PlainBodyDecoder)
	}
	doc, err := openapi3.NewLoader().LoadFromData(api.OpenAPI)
	if err != nil {
		return nil, err
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, err
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, err
	}
	return &openAPIDoc{doc, router}, nil
})

// validated records the operations whose success answer some test of
// this run validated (TestMain reports the ones none did).
var validated sync.Map

type openAPIDoc struct {
	doc    *openapi3.T
	router routers.Router
}

func TestOpenAPIIsAValidDescriptionServedWithoutAToken(t *testing.T) {
	d, err := openAPI()
	if err != nil {
		t.Fatalf("/openapi.json is not a valid OpenAPI document: %v", err)
	}
	if !d.doc.IsOpenAPI31OrLater() {
		t.Fatalf("openapi %q, want 3.1", d.doc.OpenAPI)
	}
	e := newEnv(t)
	r := e.do(req{method: "GET", path: "/openapi.json"})
	if r.status != 200 || r.header.Get("Content-Type") != "application/json" || r.body != string(api.OpenAPI) {
		t.Fatalf("GET /openapi.json without a token: %d %s", r.status, r.header.Get("Content-Type"))
	}
	for _, h := range []string{"X-Request-ID", "X-Content-Type-Options"} {
		if r.header.Get(h) == "" {
			t.Errorf("/openapi.json lacks %s", h)
		}
	}
	// The headers a client relies on are described.
	for _, h := range []string{"ETag", "Idempotent-Replayed", "X-Cache", "Retry-After", "X-Request-ID"} {
		if d.doc.Components.Headers[h] == nil {
			t.Errorf("components.headers lacks %s", h)
		}
	}
	for _, p := range []string{"ifMatch", "idempotencyKey", "xsrf"} {
		if d.doc.Components.Parameters[p] == nil {
			t.Errorf("components.parameters lacks %s", p)
		}
	}
	if d.doc.Components.SecuritySchemes["bearer"] == nil || d.doc.Components.Schemas["Problem"] == nil {
		t.Error("no bearer scheme or Problem schema")
	}
}

// TestOpenAPIAndRouteTableAgree: every route the server answers is
// described, and every described operation is a route.
func TestOpenAPIAndRouteTableAgree(t *testing.T) {
	d, err := openAPI()
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, withBuilds(), withSignIn(&signInEnv{}))
	served := map[string][]string{} // path shape -> methods
	refused := map[string]bool{}    // Bamboo write paths: every method is a 405
	for _, r := range server.RoutesOf(e.srv) {
		shape := echoShape(r.Path)
		if strings.Contains(r.Name, "writeRefused") {
			refused[shape] = true
			continue
		}
		served[shape] = append(served[shape], r.Method)
	}
	documented := map[string][]string{}
	for path, item := range d.doc.Paths.Map() {
		for method := range item.Operations() {
			documented[docShape(path)] = append(documented[docShape(path)], method)
		}
	}
	for shape, methods := range served {
		for _, m := range methods {
			if !slices.Contains(documented[shape], m) {
				t.Errorf("%s %s is served but not in /openapi.json", m, shape)
			}
		}
	}
	for shape, methods := range documented {
		for _, m := range methods {
			if !slices.Contains(served[shape], m) && !refused[shape] {
				t.Errorf("%s %s is in /openapi.json but not served", m, shape)
			}
		}
	}
	for shape := range refused {
		if len(documented[shape]) == 0 {
			t.Errorf("the refused Bamboo write path %s is not in /openapi.json", shape)
		}
	}
}

// TestPathParametersAreNamedAsDocumented: outside the build routes (whose
// table is package proxy's), each path parameter has one name, the route
// table's and api/openapi.json's alike, so that the name a handler asks
// Echo for is the one a refusal's errors item gives a client.
func TestPathParametersAreNamedAsDocumented(t *testing.T) {
	d, err := openAPI()
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, withSignIn(&signInEnv{}))
	toDoc := regexp.MustCompile(`:([A-Za-z_]+)`)
	for _, r := range server.RoutesOf(e.srv) {
		if !strings.Contains(r.Path, ":") || isBuildPath(r.Path) {
			continue
		}
		if doc := toDoc.ReplaceAllString(r.Path, "{$1}"); d.doc.Paths.Value(doc) == nil {
			t.Errorf("route %s: api/openapi.json has no path %s (a parameter named otherwise?)", r.Path, doc)
		}
	}
}

// isBuildPath reports whether path is one of the Bamboo routes.
func isBuildPath(path string) bool {
	for _, prefix := range []string{"/rest/api/", "/browse/", "/download/"} {
		if strings.HasPrefix(path, prefix) {
			return true
		}
	}
	return false
}

var (
	echoParam = regexp.MustCompile(`:[A-Za-z_]+|\*`)
	docParam  = regexp.MustCompile(`\{[^}]+\}`)
)

func echoShape(p string) string { return echoParam.ReplaceAllString(p, "{}") }
func docShape(p string) string  { return docParam.ReplaceAllString(p, "{}") }

// checkAgainstOpenAPI validates one exchange of the test suite against
// /openapi.json: every response whose operation is described (its status,
// headers and body), and the request too when it succeeded, since what
// the service accepts must be what the description says it accepts.
func checkAgainstOpenAPI(t testing.TB, hr *http.Request, body string, res resp) {
	t.Helper()
	d, err := openAPI()
	if err != nil {
		t.Errorf("/openapi.json: %v", err)
		return
	}
	route, params, err := d.router.FindRoute(asOneSegment(hr))
	if err != nil {
		return // a path the description does not name (the tests of 404s)
	}
	in := &openapi3filter.RequestValidationInput{
		Request: hr, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc},
	}
	if res.status < 300 {
		hr.Body = io.NopCloser(strings.NewReader(body))
		if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
			t.Errorf("%s %s succeeded but the request does not match /openapi.json: %v", hr.Method, hr.URL.Path, err)
		}
	}
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in, Status: res.status, Header: res.header,
		Options: &openapi3filter.Options{IncludeResponseStatus: true},
	}
	out.SetBodyBytes([]byte(res.body))
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		t.Errorf("%s %s: the %d answer does not match /openapi.json: %v", hr.Method, hr.URL.Path, res.status, err)
		return
	}
	if route.Operation.Responses.Status(res.status) != nil {
		validated.Store(route.Operation.OperationID, true) // a described (not default) answer
	}
}

// unvalidatedOperations lists the described operations no test of the run
// validated a success answer of.
func unvalidatedOperations() []string {
	d, err := openAPI()
	if err != nil {
		return []string{err.Error()}
	}
	var missing []string
	for path, item := range d.doc.Paths.Map() {
		for method, op := range item.Operations() {
			if _, ok := validated.Load(op.OperationID); !ok {
				missing = append(missing, method+" "+path)
			}
		}
	}
	slices.Sort(missing)
	return missing
}

// described is one call of TestEveryDescribedOperationAnswersAsDescribed.
type described struct {
	method, path, token, body string
	header                    map[string]string
	want                      int
}

// TestEveryDescribedOperationAnswersAsDescribed calls each operation of
// /openapi.json as its intended user would; env.do validates every answer
// (and, on success, the request) against the description, so the
// document cannot drift from what the service does.
func TestEveryDescribedOperationAnswersAsDescribed(t *testing.T) {
	e := newEnv(t, withBuilds())
	ctx := context.Background()
	if _, err := grades.NewStore(e.rdb, grades.Config{Log: quietLog}).Seed(ctx, studentID("alice"), grades.SubjectEnglish, parsedGrade("B+")); err != nil {
		t.Fatal(err)
	}
	st := accounts.NewStore(e.rdb, accounts.Config{Log: quietLog})
	for _, a := range []accounts.SeedAccount{
		{ID: "1001", Owner: "alice", Currency: "EUR", Balance: "250.00"},
		{ID: "2002", Owner: "bob", Currency: "EUR", Balance: "10.00"},
	} {
		if _, err := st.Seed(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	student, professor := token(t, "alice", "student"), token(t, "bob", "professor")
	holder, developer := token(t, "alice", "customer"), token(t, "carol", "developer")
	const rest = "/rest/api/latest"
	calls := []described{
		{"GET", "/student/alice/english/grade", student, "", nil, 200},
		{"PUT", "/student/alice/english/grade", professor, `{"grade":"A-"}`, map[string]string{"If-Match": `"1"`}, 200},
		{"POST", "/student/ghost/english/grade", professor, `{"grade":"C"}`, nil, 201},
		{"GET", "/student/alice/english/grade/history?limit=5", professor, "", nil, 200},
		{"GET", "/class", professor, "", nil, 200},
		{"GET", "/class/english-101/grades?limit=1&start=0", professor, "", nil, 200},
		{"GET", "/rs/account/1001", holder, "", nil, 200},
		{"GET", "/rs/account/1001/balance", holder, "", nil, 200},
		{"POST", "/rs/transfer/from/1001/to/2002/amount/1.50", holder, "", map[string]string{"Idempotency-Key": "once"}, 201},
		{"POST", "/rs/transfer/from/1001/to/2002/amount/1.50", holder, "", map[string]string{"Idempotency-Key": "once"}, 201}, // the replay
		{"GET", "/rs/account/1001/transfers?limit=10", holder, "", nil, 200},
		{"GET", "/rs/account/1001/transfers.csv?from=2020-01-01", holder, "", nil, 200},
		{"POST", rest + "/queue", developer, "", nil, 405},
		{"PUT", rest + "/queue/PROJ-CORE-6", developer, "", nil, 405},
		{"DELETE", rest + "/queue/PROJ-CORE-6", developer, "", nil, 405},
		{"DELETE", rest + "/result/PROJ-CORE-6/label/release", developer, "", nil, 405},
		{"DELETE", rest + "/result/PROJ-CORE-6/comment/1", developer, "", nil, 405},
		{"GET", "/ui/", "", "", nil, 200},
		{"GET", "/ui/js/main.js", "", "", nil, 200},
		{"GET", "/openapi.json", "", "", nil, 200},
		{"GET", "/problems", "", "", nil, 200},
		{"GET", "/problems/", "", "", nil, 200}, // where the index was first served
		{"GET", "/problems/insufficient-funds", "", "", nil, 200},
		{"GET", "/healthz", "", "", nil, 200},
		{"GET", "/readyz", "", "", nil, 200},
		{"GET", "/metrics", "", "", nil, 200},
	}
	// The build routes: each example of the route table (proxy.Routes),
	// as carol, who sees project PROJ.
	for _, rt := range proxy.Routes {
		for _, ex := range rt.Examples {
			calls = append(calls, described{"GET", ex, developer, "", nil, 200})
		}
	}
	// A plan's builds over time (package proxy/history).
	calls = append(calls,
		described{"GET", "/builds/PROJ-CORE/tests?last=5", developer, "", nil, 200},
		described{"GET", "/builds/PROJ-CORE/trend", developer, "", nil, 200})
	// Every .json twin and every HEAD twin answers as its GET does.
	n := len(calls)
	for _, c := range calls[:n] {
		if c.method != "GET" {
			continue
		}
		path, query, _ := strings.Cut(c.path, "?")
		if strings.HasPrefix(path, rest) && !strings.HasSuffix(path, "/latest") {
			json := path + ".json"
			if query != "" {
				json += "?" + query
			}
			calls = append(calls, described{"GET", json, c.token, "", nil, c.want})
		}
		if !strings.HasPrefix(path, "/browse/") && !strings.HasPrefix(path, "/download/") &&
			path != "/healthz" && path != "/metrics" && path != "/readyz" {
			calls = append(calls, described{"HEAD", c.path, c.token, "", nil, c.want})
			if strings.HasPrefix(path, rest) && !strings.HasSuffix(path, "/latest") {
				calls = append(calls, described{"HEAD", path + ".json", c.token, "", nil, c.want})
			}
		}
	}
	calls = append(calls,
		described{"GET", "/ui", "", "", nil, 301},
		described{"HEAD", "/ui", "", "", nil, 301})
	for _, c := range calls {
		r := e.do(req{method: c.method, path: c.path, token: c.token, body: c.body, header: c.header})
		if r.status != c.want {
			t.Errorf("%s %s: %d, want %d: %.300s", c.method, c.path, r.status, c.want, r.body)
		}
	}
}

// asOneSegment returns hr with the tail of an artifact path (which has
// slashes; OpenAPI path parameters cannot) escaped into one segment, so
// the router finds its operation.
func asOneSegment(hr *http.Request) *http.Request {
	p := hr.URL.EscapedPath()
	var head, tail string
	switch {
	case strings.HasPrefix(p, "/download/"):
		head, tail = "/download/", strings.TrimPrefix(p, "/download/")
	case strings.HasPrefix(p, "/browse/") && strings.Contains(p, "/artifact/"):
		i := strings.Index(p, "/artifact/") + len("/artifact/")
		head, tail = p[:i], p[i:]
	default:
		return hr
	}
	c := hr.Clone(hr.Context())
	u := *hr.URL
	u.RawPath = head + strings.ReplaceAll(tail, "/", "%2F")
	u.Path = head + tail
	c.URL = &u
	return c
}

// Every operation of /openapi.json says which error codes it may answer:
// its default response is a problem whose code is one of a list (its
// route family's), and each listed code is a code of the service's table.
// env.do validates every error answer of the test suite against its
// operation, so a route answering a code its list lacks fails the test
// that provoked it.
func TestEveryOperationListsItsErrorCodes(t *testing.T) {
	d, err := openAPI()
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, c := range d.doc.Components.Schemas["ProblemCode"].Value.Enum {
		known[c.(string)] = true
	}
	for path, item := range d.doc.Paths.Map() {
		for method, op := range item.Operations() {
			def := op.Responses.Default()
			if def == nil || !strings.HasPrefix(def.Ref, "#/components/responses/Problem") || def.Ref == "#/components/responses/Problem" {
				t.Errorf("%s %s: default answer %v; want a route family's problem (#/components/responses/Problem<Family>)", method, path, def)
				continue
			}
			codes := errorCodes(def.Value)
			if len(codes) == 0 {
				t.Errorf("%s %s: %s lists no codes", method, path, def.Ref)
			}
			for _, c := range codes {
				if !known[c] {
					t.Errorf("%s %s: %s lists %q, which is no ProblemCode", method, path, def.Ref, c)
				}
				if !strings.Contains(*def.Value.Description, c) {
					t.Errorf("%s %s: %s's description does not name %q", method, path, def.Ref, c)
				}
			}
		}
	}
}

// errorCodes reads the code list of a family's problem response: the enum
// its schema adds to the Problem schema.
func errorCodes(r *openapi3.Response) []string {
	media := r.Content.Get("application/problem+json")
	if media == nil || media.Schema == nil {
		return nil
	}
	var codes []string
	for _, part := range media.Schema.Value.AllOf {
		if part.Ref != "" {
			continue // the Problem schema itself, with every code
		}
		if code, ok := part.Value.Properties["code"]; ok {
			for _, c := range code.Value.Enum {
				codes = append(codes, c.(string))
			}
		}
	}
	return codes
}
