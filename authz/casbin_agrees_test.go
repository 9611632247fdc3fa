package authz

import (
	"testing"

	"github.com/casbin/casbin/v2"

	"github.com/facade-dev/facade/authz/compiled"
)

// TestShippedFilesAnswerTheReadmeQuestionsAsStockCasbin: docs/policy.md's own
// examples on the repository's files, asked of stock casbin and of the
// service's Authorizer through the question each route asks.
func TestShippedFilesAnswerTheReadmeQuestionsAsStockCasbin(t *testing.T) {
	stock, err := casbin.NewEnforcer("../model.conf", "../policy.csv")
	if err != nil {
		t.Fatal(err)
	}
	a, err := New("../model.conf", "../policy.csv", Config{Log: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	if st := a.Status(); st.Decider != compiled.DeciderIndex {
		t.Fatalf("shipped model decided by %q, want the index", st.Decider)
	}
	cases := []struct {
		sub, obj, act string
		want          bool
		service       func() bool
	}{
		{"alice", "account:1001", "view_account", true, func() bool { return a.CanViewAccount(alice, accountID("1001")) }},
		{"alice", "account:2002", "view_account", false, func() bool { return a.CanViewAccount(alice, accountID("2002")) }},
		{"carol", "plan:WEB-NIGHTLY", "view", true, func() bool { return a.CanViewPlan(carol, planKey("WEB", "NIGHTLY")) }},
		{"carol", "project:PROJ", "view", true, func() bool { return a.CanViewProject(carol, projectKey("PROJ")) }},
		{"bob", "class:english-101", "update", true, func() bool {
			return a.CanViewClass(facadePrincipal("bob", "professor"), classID("english-101"))
		}},
		{"bob", "class:english-101", "post", true, func() bool {
			return a.CanPostClass(facadePrincipal("bob", "professor"), classID("english-101"))
		}},
		{"erin", "class:english-101", "post", false, func() bool {
			return a.CanPostClass(facadePrincipal("erin", "professor"), classID("english-101"))
		}},
		{"bob", "student:alice", "update", true, func() bool { return a.CanWriteGrade(facadePrincipal("bob", "professor"), studentID("alice")) }},
		{"bob", "student:dave", "view", false, func() bool { return a.CanViewGrade(facadePrincipal("bob", "professor"), studentID("dave")) }},
		{"dev", "project:PROJ", "view", true, func() bool { return a.CanViewProject(facadePrincipal("dev", "developer"), projectKey("PROJ")) }},
		{"wendy", "plan:WEB-ANYTHING", "view", true, func() bool { return a.CanViewPlan(facadePrincipal("wendy", ""), planKey("WEB", "ANYTHING")) }},
		{"team:platform", "project:PROJ", "view", false, func() bool {
			return a.CanViewProject(facadePrincipal("team:platform", "developer"), projectKey("PROJ"))
		}},
	}
	for _, c := range cases {
		got, err := stock.Enforce(c.sub, c.obj, c.act)
		if err != nil || got != c.want {
			t.Errorf("stock casbin Enforce(%s, %s, %s) = %v, %v; want %v", c.sub, c.obj, c.act, got, err, c.want)
		}
		if c.service() != c.want {
			t.Errorf("service on (%s, %s, %s) = %v, want %v", c.sub, c.obj, c.act, !c.want, c.want)
		}
	}
}
