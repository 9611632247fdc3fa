package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/facade-dev/facade/auth"
)

// cmdToken prints an HS256 token for development and tests, signed with
// FACADE_JWT_SECRET's first key.
func cmdToken(args []string, getenv func(string) string, stdout io.Writer) error {
	fs := newFlags("token", "facade token --sub ID [--role ROLE] [--ttl 1h]   (signs with FACADE_JWT_SECRET)")
	sub := fs.String("sub", "", "principal id (the token's `sub`)")
	role := fs.String("role", "", "`role` claim (may be empty)")
	ttl := fs.Duration("ttl", time.Hour, "`lifetime`")
	if err := fs.parse(args, stdout, 0); err != nil {
		return err
	}
	if *sub == "" {
		return usageError{errors.New("--sub is required"), fs.usage}
	}
	if *ttl <= 0 {
		return usageError{errors.New("--ttl must be positive"), fs.usage}
	}
	s, err := loadSettings(getenv)
	if err != nil {
		return err
	}
	keys := s.jwtKeys()
	if len(keys) == 0 || len(keys[0]) < 32 {
		return settingsErrors{errors.New("FACADE_JWT_SECRET must be set to at least 32 bytes")}
	}
	if bad := s.checkJWTKeys(); len(bad) > 0 {
		// A token signed with a placeholder or a weak key is one anyone
		// can mint: refused as serve refuses the key.
		return settingsErrors(bad)
	}
	if *ttl > s.JWTMaxLifetime {
		// The service would refuse it: say so now rather than at first use,
		// as a wrong --ttl like any other (exit 2).
		return usageError{fmt.Errorf("--ttl %s is longer than the longest lifetime the service accepts, %s (FACADE_JWT_MAX_LIFETIME)",
			shortDuration(*ttl), shortDuration(s.JWTMaxLifetime)), fs.usage}
	}
	// The first key signs; the token's kid names it (auth.KeyID).
	tok, err := auth.Mint(keys[0], *sub, *role, s.claims(), *ttl)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, tok)
	return nil
}

// shortDuration writes d as people write it: 24h, not 24h0m0s.
func shortDuration(d time.Duration) string {
	out := d.String()
	if strings.HasSuffix(out, "m0s") {
		out = strings.TrimSuffix(out, "0s")
	}
	if strings.HasSuffix(out, "h0m") {
		out = strings.TrimSuffix(out, "0m")
	}
	return out
}
