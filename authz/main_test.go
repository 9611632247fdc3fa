package authz

import (
	"os"
	"testing"
	"time"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/authz/internal/policytest"
	"github.com/facade-dev/facade/internal/testkit/testredis"
)

func TestMain(m *testing.M) { testredis.Main(m) }

func newAuthorizer(t testing.TB, lines ...string) (*Authorizer, string) {
	t.Helper()
	modelPath, policyPath := policytest.Files(t, lines...)
	a, err := New(modelPath, policyPath, Config{})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return a, policyPath
}

// eventually polls cond until it holds or the deadline passes: file events
// and Pub/Sub messages arrive when they arrive, so tests wait for the effect
// instead of sleeping a fixed time.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// classStudents is a.Enrollment().Visible for the class named class, as text.
func classStudents(a *Authorizer, p facade.Principal, class string) []string {
	var ids []string
	for _, id := range a.Enrollment().Visible(p, classID(class)) {
		ids = append(ids, id.String())
	}
	return ids
}

// The identifiers the HTTP layer parses, for the questions.
var (
	accountID  = policytest.AccountID
	studentID  = policytest.StudentID
	classID    = policytest.ClassID
	projectKey = policytest.ProjectKey
	planKey    = policytest.PlanKey
)
