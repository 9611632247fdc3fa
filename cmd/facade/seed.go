package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/facade-dev/facade"
	"github.com/facade-dev/facade/accounts"
	"github.com/facade-dev/facade/grades"
	"github.com/facade-dev/facade/redisdb"
)

// seedFile is the seed format (docs/operations.md, "The seed file"):
//
//	{"accounts": [{"id": "1001", "owner": "alice", "currency": "EUR", "balance": "250.00"}],
//	 "grades":   [{"student_id": "alice", "subject": "english", "grade": "B+"}]}
type seedFile struct {
	Accounts []accounts.SeedAccount
	Grades   []seedGrade
	// accounts and grades are Accounts and Grades parsed, in their order,
	// by check: what is written or looked up, so each entry is parsed once.
	accounts []accounts.Account
	grades   []parsedGrade
}

type seedGrade struct {
	StudentID string `json:"student_id"`
	Subject   string `json:"subject"`
	Grade     string `json:"grade"`
}

// parsedGrade is a seedGrade parsed (zero fields where it is malformed).
type parsedGrade struct {
	student facade.StudentID
	grade   grades.Grade
}

func cmdSeed(ctx context.Context, c *cmdEnv) error {
	fs := newFlags("seed", "facade seed --file F|- [--dry-run]   (writes to FACADE_REDIS_URL)")
	file := fs.String("file", "", "seed JSON `file`; - reads standard input")
	dryRun := fs.Bool("dry-run", false, "check the file and report; write nothing (needs no Redis)")
	if err := fs.parse(c.args, c.stdout, 0); err != nil {
		return err
	}
	if *file == "" {
		return usageError{errors.New("--file is required"), fs.usage}
	}
	name, raw, err := readSeedInput(*file, c.stdin)
	if err != nil {
		return inputError{err} // exit 2, as policy test FILE does
	}
	f, problems := parseSeed(raw)
	for _, p := range problems {
		fmt.Fprintf(c.stderr, "%s:%s\n", name, p)
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s: %d problem(s); nothing written", name, len(problems))
	}
	s, err := loadSettings(c.getenv)
	if err != nil {
		return err
	}
	if *dryRun {
		return seedDryRun(ctx, c.stdout, name, f, s)
	}
	rdb, err := redisdb.Open(s.redisConfig())
	if err != nil {
		return settingsErrors{err}
	}
	defer rdb.Close()
	sum, err := seed(ctx, rdb, f, newLogger(c.stderr, s.LogLevel, time.Now))
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	fmt.Fprintln(c.stdout, sum)
	return nil
}

// seedDryRun says, entry by entry, what seeding f would write, and writes
// nothing. With a Redis configured it reads what is there: an entry that
// exists says "keep" (seed never overwrites it), a new one "create".
// Without one it needs no Redis and every entry says "seed".
func seedDryRun(ctx context.Context, w io.Writer, name string, f seedFile, s settings) error {
	verb := func(func() error) (string, error) { return "seed", nil }
	var acc *accounts.Store
	var gr *grades.Store
	if s.RedisURL != "" || s.RedisAddrs != "" {
		rdb, err := redisdb.Open(s.redisConfig())
		if err != nil {
			return settingsErrors{err}
		}
		defer rdb.Close()
		acc, gr = accounts.NewStore(rdb, accounts.Config{}), grades.NewStore(rdb, grades.Config{})
		verb = func(get func() error) (string, error) {
			switch err := get(); {
			case err == nil:
				return "keep", nil
			case errors.Is(err, facade.ErrNotFound):
				return "create", nil
			default:
				return "", fmt.Errorf("%s: reading Redis: %w", name, err)
			}
		}
	}
	created := map[string]int{}
	for i, a := range f.Accounts {
		v, err := verb(func() error { _, err := acc.Get(ctx, f.accounts[i].ID); return err })
		if err != nil {
			return err
		}
		created[v+" account"]++
		fmt.Fprintf(w, "%-6s account %s (owner %s, %s %s)\n", v, a.ID, a.Owner, a.Balance, a.Currency)
	}
	for i, g := range f.Grades {
		v, err := verb(func() error { _, err := gr.Get(ctx, f.grades[i].student, g.Subject); return err })
		if err != nil {
			return err
		}
		created[v+" grade"]++
		fmt.Fprintf(w, "%-6s grade   %s %s %s\n", v, g.StudentID, g.Subject, g.Grade)
	}
	if acc == nil {
		fmt.Fprintf(w, "%s: %d accounts and %d grades, no problems; nothing written (--dry-run; with FACADE_REDIS_URL set it says which exist already)\n",
			name, len(f.Accounts), len(f.Grades))
		return nil
	}
	fmt.Fprintf(w, "%s: would create %d of %d accounts and %d of %d grades (existing ones left unchanged); nothing written (--dry-run)\n",
		name, created["create account"], len(f.Accounts), created["create grade"], len(f.Grades))
	return nil
}

func readSeedInput(file string, stdin io.Reader) (name string, raw []byte, err error) {
	if file == "-" {
		raw, err = io.ReadAll(stdin)
		return "stdin", raw, err
	}
	raw, err = os.ReadFile(file)
	return file, raw, err
}

// seed writes a checked seed file. Existing accounts and grades are left as
// they are: a balance is never overwritten. The log gets one audit line
// with the counts, not one per grade (a lecture's file holds thousands);
// each grade's own trail is in Redis (its history, by "seed").
func seed(ctx context.Context, rdb redis.UniversalClient, f seedFile, log *slog.Logger) (string, error) {
	quiet := slog.New(slog.DiscardHandler)
	acc, gr := accounts.NewStore(rdb, accounts.Config{Log: log}), grades.NewStore(rdb, grades.Config{Log: quiet})
	var newAcc, newGr int
	for i, a := range f.accounts {
		created, err := acc.Create(ctx, a)
		if err != nil {
			return "", fmt.Errorf("accounts[%d] (%q): %w", i, a.ID, err)
		}
		newAcc += btoi(created)
	}
	for i, g := range f.Grades {
		created, err := gr.Seed(ctx, f.grades[i].student, g.Subject, f.grades[i].grade)
		if err != nil {
			return "", fmt.Errorf("grades[%d] (%q): %w", i, g.StudentID, err)
		}
		newGr += btoi(created)
	}
	log.LogAttrs(ctx, slog.LevelInfo, "seeded", slog.Bool("audit", true), slog.String("who", grades.SeedActor),
		slog.Int("accounts_created", newAcc), slog.Int("accounts", len(f.Accounts)),
		slog.Int("grades_created", newGr), slog.Int("grades", len(f.Grades)))
	return fmt.Sprintf("seeded %d of %d accounts and %d of %d grades (existing ones left unchanged)",
		newAcc, len(f.Accounts), newGr, len(f.Grades)), nil
}
