package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/facade-dev/facade/auth"
	"github.com/facade-dev/facade/redisdb"
)

const sessionsUsage = `usage: facade sessions list|revoke --sub ID   (reads FACADE_REDIS_URL)

  list --sub ID     a principal's browser sessions: created, last used, ends, client address
  revoke --sub ID   end all of them at once, on every instance (offboarding, a stolen laptop),
                    and refuse the principal's bearer tokens issued until now
`

// cmdSessions is ops' view of browser sessions (docs/signin.md): they
// live in Redis, so listing and ending
// them needs FACADE_REDIS_URL only, not the session keys.
func cmdSessions(ctx context.Context, c *cmdEnv) error {
	usage := func(w io.Writer) { fmt.Fprint(w, sessionsUsage) }
	if len(c.args) == 0 {
		return usageError{errorf("list or revoke?"), usage}
	}
	verb := c.args[0]
	if verb != "list" && verb != "revoke" {
		if verb == "-h" || verb == "--help" || verb == "help" {
			usage(c.stdout)
			return errHelp
		}
		return usageError{errorf("unknown sessions command %q", verb), usage}
	}
	fs := newFlags("sessions "+verb, "facade sessions "+verb+" --sub ID")
	sub := fs.String("sub", "", "the principal id (its sub, as /auth/me shows it)")
	if err := fs.parse(c.args[1:], c.stdout, 0); err != nil {
		return err
	}
	if *sub == "" {
		return usageError{errorf("--sub is required"), fs.usage}
	}
	s, err := loadSettings(c.getenv)
	if err != nil {
		return err
	}
	rdb, err := redisdb.Open(s.redisConfig())
	if err != nil {
		return settingsErrors{err}
	}
	defer rdb.Close()
	sessions := auth.NewSessionAdmin(rdb, s.sessionConfig(time.Now))
	if verb == "revoke" {
		return revoke(ctx, c.stdout, sessions, rdb, s, *sub)
	}
	list, err := sessions.List(ctx, *sub)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CREATED\tLAST USED\tENDS BY\tCLIENT")
	for _, x := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", x.Created.UTC().Format(time.RFC3339), x.LastUsed.UTC().Format(time.RFC3339),
			x.Expires.UTC().Format(time.RFC3339), x.Client)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "%d session(s) of %s\n", len(list), *sub)
	return nil
}

// revoke ends sub's sessions and refuses its bearer tokens issued until
// now, on every instance: each instance reads the revocation when it next
// verifies a token, so one that verified a token in the last minute
// accepts it until its cache of verified tokens lets it go
// (docs/operations.md, "Revoking a principal").
func revoke(ctx context.Context, w io.Writer, sessions *auth.Sessions, rdb redis.UniversalClient, s settings, sub string) error {
	at := time.Now()
	if err := auth.RevokeTokens(ctx, rdb, sub, at, s.JWTMaxLifetime); err != nil {
		return err
	}
	n, err := sessions.Revoke(ctx, sub)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "revoked %d session(s) of %s\n", n, sub)
	fmt.Fprintf(w, "refused %s's bearer tokens issued until %s, on every instance within a minute, until they expire (at most %s)\n",
		sub, at.UTC().Format(time.RFC3339), shortDuration(s.JWTMaxLifetime))
	return nil
}
