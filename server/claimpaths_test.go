package server_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/facade-dev/facade/auth"
	"github.com/facade-dev/facade/grades"
)

// keycloakToken is an access token shaped as a default Keycloak realm
// issues it: roles in realm_access.roles (among Keycloak's own), client
// roles in resource_access.<client>.roles, no top-level role claim.
func keycloakToken(sub string, realmRoles, clientRoles []any, extra ...any) jwt.MapClaims {
	c := claims(sub, time.Hour,
		"iss", "https://idp.example", "aud", "facade", "azp", "facade", "typ", "Bearer",
		"preferred_username", sub, "scope", "openid profile email",
		"realm_access", map[string]any{"roles": realmRoles},
		"resource_access", map[string]any{
			"facade":  map[string]any{"roles": clientRoles},
			"account": map[string]any{"roles": []any{"manage-account", "view-profile"}},
		})
	delete(c, "role")
	for i := 0; i+1 < len(extra); i += 2 {
		c[extra[i].(string)] = extra[i+1]
	}
	return c
}

// meOf is GET /auth/me for tok, decoded.
func meOf(t *testing.T, e *env, tok string) map[string]any {
	t.Helper()
	r := e.do(req{method: "GET", path: "/auth/me", token: tok})
	var m map[string]any
	if r.status != 200 || json.Unmarshal([]byte(r.body), &m) != nil {
		t.Fatalf("/auth/me: %d %s", r.status, r.body)
	}
	return m
}

func strs(v any) []string {
	var out []string
	list, _ := v.([]any)
	for _, x := range list {
		out = append(out, x.(string))
	}
	return out
}

// TestKeycloakRealmRolesMakeAStudentProfessor: with
// FACADE_ROLE_CLAIM=realm_access.roles, a default Keycloak token's role
// list gives every role in it the grade rules know. Tara, a teaching
// assistant, is a student enrolled in english-101 and a professor who
// teaches it: she reads her own grade and her class's grades, changes
// her students' grades, and never changes her own.
func TestKeycloakRealmRolesMakeAStudentProfessor(t *testing.T) {
	ts, rk, _ := jwksServer(t)
	e := newEnv(t, withAuth(auth.TokenConfig{JWKSURL: ts.URL, Issuer: "https://idp.example", Audience: "facade",
		Claims: auth.Claims{Role: "realm_access.roles"}}),
		withPolicyLines("p, tara, class:english-101, view", "p, tara, class:english-101, update", "g, student:tara, class:english-101"))
	seedGrades(t, e)
	seedGradeOf(t, e, "tara")
	tara := sign(t, jwt.SigningMethodRS256, rk, "rsa1", keycloakToken("tara",
		[]any{"offline_access", "default-roles-acme", "student", "uma_authorization", "professor"}, nil))

	for path, want := range map[string]int{
		"/student/tara/english/grade":  200, // her own, as a student
		"/student/alice/english/grade": 200, // her class's, as a professor
		"/student/dave/english/grade":  403, // math-201: not her class
	} {
		if r := e.do(req{method: "GET", path: path, token: tara}); r.status != want {
			t.Errorf("GET %s: %d, want %d (%s)", path, r.status, want, r.body)
		}
	}
	if r := e.do(req{method: "PUT", path: "/student/alice/english/grade", token: tara, body: `{"grade":"A"}`, header: map[string]string{"If-Match": `"1"`}}); r.status != 200 {
		t.Errorf("PUT alice's grade as her professor: %d %s", r.status, r.body)
	}
	if r := e.do(req{method: "PUT", path: "/student/tara/english/grade", token: tara, body: `{"grade":"A"}`, header: map[string]string{"If-Match": `"1"`}}); r.status != 403 {
		t.Errorf("PUT her own grade: %d, want 403 (%s)", r.status, r.body)
	}
	me := meOf(t, e, tara)
	if got := strs(me["roles"]); !slices.Equal(got, []string{"professor", "student"}) {
		t.Errorf("/auth/me roles %q, want professor and student (Keycloak's own roles left out)", got)
	}
	if me["role"] != "student" {
		t.Errorf("/auth/me role %v, want the list's first known role, student", me["role"])
	}

	// Keycloak's own roles alone are no role here.
	nobody := sign(t, jwt.SigningMethodRS256, rk, "rsa1", keycloakToken("alice", []any{"offline_access", "uma_authorization"}, nil))
	if r := e.do(req{method: "GET", path: "/student/alice/english/grade", token: nobody}); r.status != 403 {
		t.Errorf("token with only Keycloak's roles read a grade: %d", r.status)
	}
}

// TestClientRolesAndDottedNames: resource_access.facade.roles reads the
// client's roles; a claim whose name holds dots is written in brackets;
// roles the policy gives add to the token's.
func TestClientRolesAndDottedNames(t *testing.T) {
	ts, rk, _ := jwksServer(t)
	cfg := func(role, groups string) envOption {
		return withAuth(auth.TokenConfig{JWKSURL: ts.URL, Issuer: "https://idp.example", Audience: "facade",
			Claims: auth.Claims{Role: role, Groups: groups}})
	}
	e := newEnv(t, cfg("resource_access.facade.roles", `["https://facade.example/claims"].groups`),
		withPolicyLines("g, group:english-tas, role:professor", "p, group:english-tas, class:english-101, view"))
	seedGrades(t, e)
	tok := sign(t, jwt.SigningMethodRS256, rk, "rsa1", keycloakToken("alice", []any{"professor"}, []any{"student"},
		"https://facade.example/claims", map[string]any{"groups": []any{"english-tas"}}))
	me := meOf(t, e, tok)
	if got := strs(me["roles"]); !slices.Equal(got, []string{"professor", "student"}) {
		t.Errorf("roles %q: want student from the client's roles and professor from the policy (realm roles not read)", got)
	}
	if got := strs(me["groups"]); !slices.Equal(got, []string{"english-tas"}) {
		t.Errorf("groups %q from the bracketed claim name", got)
	}
	if r := e.do(req{method: "GET", path: "/student/dave/english/grade", token: tok}); r.status != 403 {
		t.Errorf("dave's grade: %d", r.status)
	}
	if r := e.do(req{method: "GET", path: "/student/alice/english/grade", token: tok}); r.status != 200 {
		t.Errorf("own grade as a student: %d", r.status)
	}
}

// TestUnreadableClaimPathStopsStartUp: a path that cannot be read is a
// configuration error naming its setting, never a silent "no role".
func TestUnreadableClaimPathStopsStartUp(t *testing.T) {
	for _, path := range []string{"realm_access.", ".roles", `["unclosed`, `["a"]b`, "a..b", `[a]`} {
		err := auth.TokenConfig{Secret: testSecret, Claims: auth.Claims{Role: path}}.Check()
		if err == nil || !containsAll(err.Error(), "FACADE_ROLE_CLAIM") {
			t.Errorf("role claim %q: %v", path, err)
		}
		err = auth.TokenConfig{Secret: testSecret, Claims: auth.Claims{Groups: path}}.Check()
		if err == nil || !containsAll(err.Error(), "FACADE_GROUPS_CLAIM") {
			t.Errorf("groups claim %q: %v", path, err)
		}
	}
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

func seedGradeOf(t *testing.T, e *env, student string) {
	t.Helper()
	st := grades.NewStore(e.rdb, grades.Config{Log: quietLog})
	if _, err := st.Seed(context.Background(), studentID(student), grades.SubjectEnglish, parsedGrade("B")); err != nil {
		t.Fatal(err)
	}
}

// TestGroupsOverageIsVisible: a token that says the person's groups did
// not fit (Entra's _claim_names.groups and _claim_sources instead of
// groups) signs the person in without groups; /auth/me says
// groups_incomplete, and a warning naming the principal is logged.
func TestGroupsOverageIsVisible(t *testing.T) {
	ts, rk, _ := jwksServer(t)
	e := newEnv(t, withAuth(auth.TokenConfig{JWKSURL: ts.URL, Issuer: "https://idp.example", Audience: "facade"}))
	entra := claims("ines", time.Hour, "iss", "https://idp.example", "aud", "facade",
		"_claim_names", map[string]any{"groups": "src1"},
		"_claim_sources", map[string]any{"src1": map[string]any{"endpoint": "https://graph.microsoft.com/v1.0/users/ines/getMemberObjects"}})
	me := meOf(t, e, sign(t, jwt.SigningMethodRS256, rk, "rsa1", entra))
	if me["signed_in"] != true || me["groups_incomplete"] != true || len(strs(me["groups"])) != 0 {
		t.Errorf("/auth/me for an overage token: %v", me)
	}
	if !containsAll(e.logs.String(), `"level":"WARN"`, "groups overage", `"principal":"ines"`) {
		t.Errorf("no warning naming the principal:\n%s", e.logs.String())
	}
	plain := meOf(t, e, sign(t, jwt.SigningMethodRS256, rk, "rsa1", claims("ivan", time.Hour, "iss", "https://idp.example", "aud", "facade", "groups", []any{"a"})))
	if _, said := plain["groups_incomplete"]; said {
		t.Errorf("a token with its groups says groups_incomplete: %v", plain)
	}
}
