package authz

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/internal/testkit/testredis"
)

func TestMain(m *testing.M) { testredis.Main(m) }

// shippedModel is the repository's model.conf: every test runs against the
// file ops actually get.
func shippedModel(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile("../model.conf")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// policyFiles writes the shipped model and the given policy lines into a
// fresh directory and returns both paths.
func policyFiles(t testing.TB, lines ...string) (modelPath, policyPath string) {
	t.Helper()
	dir := t.TempDir()
	modelPath, policyPath = filepath.Join(dir, "model.conf"), filepath.Join(dir, "policy.csv")
	writeFile(t, modelPath, shippedModel(t))
	writeFile(t, policyPath, strings.Join(lines, "\n")+"\n")
	return modelPath, policyPath
}

func writeFile(t testing.TB, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// replaceFile swaps in new content by rename, as editors and config
// managers do.
func replaceFile(t testing.TB, path, text string) {
	t.Helper()
	tmp := path + ".tmp"
	writeFile(t, tmp, text)
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func newAuthorizer(t testing.TB, lines ...string) (*Authorizer, string) {
	t.Helper()
	modelPath, policyPath := policyFiles(t, lines...)
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

// accountID is s parsed as the HTTP layer parses it; text it refuses is
// the zero AccountID, which names no account (and is allowed nothing).
func accountID(s string) facade.AccountID {
	id, _ := facade.ParseAccountID(s)
	return id
}

// studentID is s parsed as the HTTP layer parses it; text it refuses is
// the zero StudentID, which names no student (and is allowed nothing).
func studentID(s string) facade.StudentID {
	id, _ := facade.ParseStudentID(s)
	return id
}

// classID is s parsed as the HTTP layer parses it; text it refuses is the
// zero ClassID, which names no class (and is allowed nothing).
func classID(s string) facade.ClassID {
	id, _ := facade.ParseClassID(s)
	return id
}

// classStudents is a.ClassStudents for the class named class, as text.
func classStudents(a *Authorizer, p facade.Principal, class string) []string {
	var ids []string
	for _, id := range a.ClassStudents(p, classID(class)) {
		ids = append(ids, id.String())
	}
	return ids
}

// projectKey is s parsed as the proxy parses a key; text it refuses is the
// zero ProjectKey, which names no project (and is allowed nothing).
func projectKey(s string) facade.ProjectKey {
	k, _ := facade.ParseProjectKey(s)
	return k
}

// planKey is project-plan parsed as the proxy parses a key; text it
// refuses is the zero PlanKey, which names no plan (and is allowed nothing).
func planKey(project, plan string) facade.PlanKey {
	k, _ := facade.ParsePlanKey(project + "-" + plan)
	return k
}
