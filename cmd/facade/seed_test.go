package main

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/facade-dev/facade/grades"
	"github.com/facade-dev/facade/internal/testkit/testredis"
)

// TestSeedReportsEveryProblemWithItsPosition: one run shows everything to
// fix, each at file:line:column with the entry it is in, and writes
// nothing.
func TestSeedReportsEveryProblemWithItsPosition(t *testing.T) {
	url := testredis.URL(t)
	env := settingsFrom(map[string]string{"FACADE_REDIS_URL": url})
	file := filepath.Join(t.TempDir(), "seed.json")
	body := `{
  "accounts": [
    {"id": "5005", "owner": "eve", "currency": "EUR", "balance": "1.00"},
    {"id": "x y", "owner": "x", "currency": "EUR", "balance": "1"},
    {"id": "6006", "owner": "", "currency": "EUR", "balance": "1"},
    {"id": "7007", "owner": "eve", "currency": "XXX", "balance": "1"},
    {"id": "8008", "owner": "eve", "currency": "EUR", "balance": "1.001"},
    {"id": "5005", "owner": "eve", "currency": "EUR", "balance": "2.00"},
    {"id": "9009", "owner": "eve", "currency": "EUR", "balance": 3},
    {"id": "9010", "owner": "eve", "currency": "EUR", "balance": "3", "colour": "red"}
  ],
  "grades": [
    {"student_id": "bob", "subject": "english", "grade": "Z"},
    {"student_id": "bob", "grade": "B"},
    {"student_id": "bob", "subject": "english", "grade": "A"}
  ],
  "teachers": []
}`
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCmd(env, "seed", "--file", file)
	want := []string{
		file + `:4:5: accounts[1]: id "x y" is not a valid account id`,
		file + `:5:5: accounts[2]: owner is required`,
		file + `:6:5: accounts[3]: currency "XXX" is not a known ISO 4217 code`,
		file + `:7:5: accounts[4]: balance "1.001" is not a non-negative amount with at most 2 decimals (EUR)`,
		file + `:8:5: accounts[5]: account "5005" is listed twice (first on line 3)`,
		file + `:9:5: accounts[6]: "balance" must be a string`,
		file + `:10:5: accounts[7]: json: unknown field "colour"`,
		file + `:13:5: grades[0]: grade "Z" is not on the scale A+ to F`,
		file + `:15:5: grades[2]: bob's english grade is listed twice (first on line 14)`,
		file + `:17:3: unknown field "teachers" (the file has "accounts" and "grades")`,
		"facade seed: " + file + ": 10 problem(s); nothing written",
	}
	if code != 1 || stdout != "" || strings.TrimSpace(stderr) != strings.Join(want, "\n") {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s\nwant:\n%s", code, stdout, stderr, strings.Join(want, "\n"))
	}
	keys, err := redisFromURL(t, url).Keys(context.Background(), "*").Result()
	if err != nil || len(keys) != 0 {
		t.Fatalf("a refused seed file wrote %v (%v)", keys, err)
	}
}

func TestSeedBrokenJSONNamesWhereItBreaks(t *testing.T) {
	env := settingsFrom(map[string]string{})
	cases := map[string]string{
		"{\n  \"accounts\": [\n    {\"id\": \"1\",,}\n  ]\n}": `stdin:3:16: not valid JSON`,
		`{"accounts": [`:   `stdin:1:15: not valid JSON: the file ends early`,
		`[]`:               `stdin:1:1: the file must be a JSON object with "accounts" and "grades"`,
		`{"accounts": {}}`: `stdin:1:14: "accounts" must be an array`,
		``:                 `stdin:1:1: not valid JSON: the file ends early`,
	}
	for in, want := range cases {
		code, _, stderr := runCmdWithInput(env, in, "seed", "--file", "-", "--dry-run")
		if code != 1 || !strings.HasPrefix(stderr, want) {
			t.Errorf("seed of %q: exit %d\n%s\nwant a line starting %q", in, code, stderr, want)
		}
	}
}

// TestSeedDryRunAndStandardInput: --dry-run checks and reports without
// Redis (none is configured here) and writes nothing; --file - reads the
// document from standard input and seeds it.
func TestSeedDryRunAndStandardInput(t *testing.T) {
	doc := `{"accounts": [{"id": "1001", "owner": "alice", "currency": "EUR", "balance": "250.00"}],
	         "grades": [{"student_id": "alice", "subject": "english", "grade": "B+"},
	                    {"student_id": "dave", "grade": "A-"}]}`
	code, out, stderr := runCmdWithInput(settingsFrom(map[string]string{}), doc, "seed", "--file", "-", "--dry-run")
	want := `seed   account 1001 (owner alice, 250.00 EUR)
seed   grade   alice english B+
seed   grade   dave english A-
stdin: 1 accounts and 2 grades, no problems; nothing written (--dry-run; with FACADE_REDIS_URL set it says which exist already)
`
	if code != 0 || out != want {
		t.Fatalf("dry run: exit %d\n%s%s\nwant\n%s", code, out, stderr, want)
	}

	// With a Redis holding alice's grade, the dry run says which entries
	// it would create and which it would leave as they are.
	url := testredis.URL(t)
	env := settingsFrom(map[string]string{"FACADE_REDIS_URL": url})
	rdb := redisFromURL(t, url)
	if _, err := grades.NewStore(rdb, grades.Config{}).Seed(context.Background(), mustStudentID("alice"), "english", mustGrade("C")); err != nil {
		t.Fatal(err)
	}
	before := redisDump(t, rdb)
	file := filepath.Join(t.TempDir(), "seed.json")
	if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr = runCmd(env, "seed", "--file", file, "--dry-run")
	want = `create account 1001 (owner alice, 250.00 EUR)
keep   grade   alice english B+
create grade   dave english A-
` + file + `: would create 1 of 1 accounts and 1 of 2 grades (existing ones left unchanged); nothing written (--dry-run)
`
	if code != 0 || out != want {
		t.Fatalf("dry run with Redis: exit %d\n%s%s\nwant\n%s", code, out, stderr, want)
	}
	if after := redisDump(t, rdb); !reflect.DeepEqual(after, before) {
		t.Fatalf("--dry-run changed Redis:\nbefore %v\nafter  %v", before, after)
	}
	if code, _, _ := runCmd(settingsFrom(map[string]string{"FACADE_REDIS_URL": "redis://127.0.0.1:1/0"}), "seed", "--file", file, "--dry-run"); code != 1 {
		t.Errorf("dry run against an unreachable Redis: exit %d, want 1", code)
	}
	if err := rdb.FlushDB(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	code, out, stderr = runCmdWithInput(env, doc, "seed", "--file", "-")
	if code != 0 || !strings.Contains(out, "seeded 1 of 1 accounts and 2 of 2 grades") {
		t.Fatalf("seed from stdin: exit %d %q %q", code, out, stderr)
	}
	if keys, _ := rdb.Keys(context.Background(), "*").Result(); len(keys) == 0 {
		t.Fatal("seed from stdin wrote nothing")
	}
}

// redisDump is every key with its type and serialized value: equal dumps
// mean nothing was written.
func redisDump(t *testing.T, rdb *redis.Client) map[string]string {
	t.Helper()
	ctx := context.Background()
	keys, err := rdb.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, k := range keys {
		v, err := rdb.Dump(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		out[k] = v
	}
	return out
}
