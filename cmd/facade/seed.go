package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/redis/go-redis/v9"

	"github.com/facade-dev/facade/accounts"
	"github.com/facade-dev/facade/grades"
	"github.com/facade-dev/facade/redisdb"
)

// seedFile is the format of SPEC section 8.
type seedFile struct {
	Accounts []accounts.SeedAccount `json:"accounts"`
	Grades   []seedGrade            `json:"grades"`
}

type seedGrade struct {
	StudentID string `json:"student_id"`
	Subject   string `json:"subject"`
	Grade     string `json:"grade"`
}

func cmdSeed(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("seed", flag.ContinueOnError)
	fs.SetOutput(stderr)
	file := fs.String("file", "", "seed JSON file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *file == "" {
		return errors.New("--file is required")
	}
	raw, err := os.ReadFile(*file)
	if err != nil {
		return err
	}
	s, err := loadSettings(getenv)
	if err != nil {
		return err
	}
	rdb, err := redisdb.Open(s.redisConfig())
	if err != nil {
		return err
	}
	defer rdb.Close()
	sum, err := seed(ctx, rdb, raw, newLogger(stderr, s.LogLevel))
	if err != nil {
		return fmt.Errorf("%s: %w", *file, err)
	}
	fmt.Fprintln(stdout, sum)
	return nil
}

// seed loads a seed document. Every entry is validated before anything is
// written, so a bad file changes nothing; existing accounts and grades are
// left as they are: a balance is never overwritten.
func seed(ctx context.Context, rdb redis.UniversalClient, raw []byte, log *slog.Logger) (string, error) {
	f, err := parseSeed(raw)
	if err != nil {
		return "", err
	}
	acc, gr := accounts.NewStore(rdb, log), grades.NewStore(rdb, log)
	var newAcc, newGr int
	for i, a := range f.Accounts {
		created, err := acc.Seed(ctx, a)
		if err != nil {
			return "", fmt.Errorf("accounts[%d] (%q): %w", i, a.ID, err)
		}
		newAcc += btoi(created)
	}
	for i, g := range f.Grades {
		created, err := gr.Seed(ctx, g.StudentID, g.Subject, g.Grade)
		if err != nil {
			return "", fmt.Errorf("grades[%d] (%q): %w", i, g.StudentID, err)
		}
		newGr += btoi(created)
	}
	return fmt.Sprintf("seeded %d of %d accounts and %d of %d grades (existing ones left unchanged)",
		newAcc, len(f.Accounts), newGr, len(f.Grades)), nil
}

// parseSeed decodes and validates a whole seed file.
func parseSeed(raw []byte) (seedFile, error) {
	var f seedFile
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return f, fmt.Errorf("not a valid seed file: %w", err)
	}
	for i, a := range f.Accounts {
		if _, err := a.Account(); err != nil {
			return f, fmt.Errorf("accounts[%d] (%q): needs a valid id, an owner, a known ISO 4217 currency and a balance in its precision", i, a.ID)
		}
	}
	for i := range f.Grades {
		g := &f.Grades[i]
		if g.Subject == "" {
			g.Subject = grades.SubjectEnglish
		}
		if err := grades.CheckIDs(g.StudentID, g.Subject); err != nil {
			return f, fmt.Errorf("grades[%d] (%q): malformed student id or subject", i, g.StudentID)
		}
		if _, err := grades.ParseGrade(g.Grade); err != nil {
			return f, fmt.Errorf("grades[%d] (%q): grade %q is not on the scale", i, g.StudentID, g.Grade)
		}
	}
	return f, nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
