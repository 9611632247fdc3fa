package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"runtime/debug"
	"strings"
)

// Exit codes, the same for every command.
const (
	exitOK     = 0
	exitFailed = 1 // the command ran and failed (the policy tools: deny, mismatch, problems found)
	exitUsage  = 2 // the command line or the settings are wrong; nothing was started
)

// command is one entry of `facade --help`.
type command struct {
	name, synopsis string
	run            func(ctx context.Context, c *cmdEnv) error
}

// cmdEnv is what a command may read and write: nothing else.
type cmdEnv struct {
	args           []string
	getenv         func(string) string
	stdin          io.Reader
	stdout, stderr io.Writer
}

func printUsage(w io.Writer) {
	fmt.Fprint(w, "usage: facade <command> [flags]\n\ncommands:\n")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.synopsis)
	}
	fmt.Fprint(w, "\n`facade <command> --help` shows a command's flags; settings are FACADE_* environment variables (README.md).\n")
}

// errHelp: the usage was asked for and has been printed to stdout.
var errHelp = errors.New("help shown")

// usageError is a wrong command line: exit 2, the message and the usage
// on stderr.
type usageError struct {
	err   error
	usage func(io.Writer)
}

func (e usageError) Error() string { return e.err.Error() }

// settingsErrors are every bad setting found at once, one line each.
type settingsErrors []error

func (e settingsErrors) Error() string { return errors.Join(e...).Error() }

// exitStatus is a result the command has already printed (the policy
// tools' "deny"); it only sets the exit code.
type exitStatus int

func (e exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// inputError is a file named on the command line that cannot be read
// (seed --file, policy test FILE, policy check --policy): exit 2, like a
// wrong command line, with the reason and no usage.
type inputError struct{ error }

func (e inputError) Unwrap() error { return e.error }

// toolError names the tool an error belongs to ("facade policy explain"),
// for commands that have tools of their own.
type toolError struct {
	tool string
	err  error
}

func (e toolError) Error() string { return e.err.Error() }
func (e toolError) Unwrap() error { return e.err }

// exitCode turns a command's error into its exit code, printing what the
// user needs on stderr: the one place that decides both.
func exitCode(stderr io.Writer, prog string, err error) int {
	var (
		usage    usageError
		settings settingsErrors
		status   exitStatus
		input    inputError
		tool     toolError
	)
	if errors.As(err, &tool) {
		prog = tool.tool
	}
	switch {
	case err == nil, errors.Is(err, errHelp):
		return exitOK
	case errors.As(err, &status):
		return int(status)
	case errors.As(err, &usage):
		return usageFailure(stderr, prog, usage.err, usage.usage)
	case errors.As(err, &settings):
		for _, e := range settings {
			fmt.Fprintf(stderr, "%s: %v\n", prog, e)
		}
		return exitUsage
	case errors.As(err, &input):
		fmt.Fprintf(stderr, "%s: %v\n", prog, input.error)
		return exitUsage
	}
	fmt.Fprintf(stderr, "%s: %v\n", prog, err)
	return exitFailed
}

func usageFailure(stderr io.Writer, prog string, err error, usage func(io.Writer)) int {
	fmt.Fprintf(stderr, "%s: %v\n", prog, err)
	if usage != nil {
		usage(stderr)
	}
	return exitUsage
}

// flagSet is the flag set of one command with the synopsis its usage
// starts with. The flag package's own printing is off: parse and exitCode
// print once, to the right stream.
type flagSet struct {
	*flag.FlagSet
	synopsis string
}

// newFlags returns the flag set of "facade <name>".
func newFlags(name, synopsis string) *flagSet {
	fs := flag.NewFlagSet("facade "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return &flagSet{fs, synopsis}
}

// usage prints "usage: <synopsis>" and the flags.
func (fs *flagSet) usage(w io.Writer) {
	fmt.Fprintf(w, "usage: %s\n", fs.synopsis)
	fs.VisitAll(func(f *flag.Flag) {
		name, help := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if name != "" {
			line += " " + name
		}
		if f.DefValue != "" && f.DefValue != "false" {
			help += fmt.Sprintf(" (default %s)", f.DefValue)
		}
		fmt.Fprintf(w, "%-30s %s\n", line, help)
	})
}

// parse parses args. --help/-h prints the usage to stdout and returns
// errHelp; an unknown flag, a bad value or more than maxArgs positional
// arguments is a usageError.
func (fs *flagSet) parse(args []string, stdout io.Writer, maxArgs int) error {
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fs.usage(stdout)
		return errHelp
	case err != nil:
		return usageError{flagError(err), fs.usage}
	case fs.NArg() > maxArgs:
		return usageError{fmt.Errorf("unexpected argument %q", fs.Arg(maxArgs)), fs.usage}
	}
	return nil
}

// flagError rewrites the flag package's messages in the spelling the
// usage shows (--name, not -name) and in words: "unknown flag --bogus",
// "--sub needs a value", "--ttl "soon": invalid value (parse error)".
func flagError(err error) error {
	msg := err.Error()
	for _, r := range []struct{ prefix, format string }{
		{"flag provided but not defined: -", "unknown flag --%s"},
		{"flag needs an argument: -", "--%s needs a value"},
	} {
		if name, ok := strings.CutPrefix(msg, r.prefix); ok {
			return fmt.Errorf(r.format, strings.TrimLeft(name, "-"))
		}
	}
	// invalid value "soon" for flag -ttl: parse error
	// invalid boolean value "x" for -dry-run: parse error
	if m := invalidFlagValue.FindStringSubmatch(msg); m != nil {
		return fmt.Errorf("--%s %s: invalid value (%s)", m[2], m[1], m[3])
	}
	return err
}

var invalidFlagValue = regexp.MustCompile(`^invalid (?:boolean )?value ("(?:[^"\\]|\\.)*") for (?:flag )?-+([^:\s]+): (.*)$`)

func cmdVersion(c *cmdEnv) error {
	fs := newFlags("version", "facade version")
	if err := fs.parse(c.args, c.stdout, 0); err != nil {
		return err
	}
	info, _ := debug.ReadBuildInfo()
	fmt.Fprintln(c.stdout, versionLine(info))
	return nil
}

// stampedVersion and stampedCommit are set by the image's build (the
// Dockerfile: -ldflags "-X main.stampedVersion=... -X main.stampedCommit=..."),
// where the source has no .git for Go to read them from. When set they win
// over the build information.
var stampedVersion, stampedCommit string

// versionLine says which code this is: the module version (a tag, or Go's
// pseudo-version for a build from a checkout), the VCS commit and whether
// the tree had changes, and the Go version.
func versionLine(info *debug.BuildInfo) string {
	if info == nil {
		return "facade (no build information)"
	}
	version, commit := buildStamp(info)
	var when string
	dirty := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.time":
			when = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	parts := []string{"facade " + version}
	if commit != "unknown" {
		c := "commit " + commit
		if dirty && stampedCommit == "" {
			c += " (modified)"
		}
		if when != "" && stampedCommit == "" {
			c += " " + when
		}
		parts = append(parts, c)
	} else {
		parts = append(parts, "commit unknown")
	}
	return strings.Join(append(parts, info.GoVersion), ", ")
}

// buildStamp is the version and commit of this binary: stamped by the
// build, else from the build information, else "(devel)" and "unknown".
func buildStamp(info *debug.BuildInfo) (version, commit string) {
	version, commit = "(devel)", "unknown"
	if info != nil {
		if info.Main.Version != "" {
			version = info.Main.Version
		}
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" && s.Value != "" {
				commit = s.Value
			}
		}
	}
	if stampedVersion != "" {
		version = stampedVersion
	}
	if stampedCommit != "" {
		commit = stampedCommit
	}
	return version, commit
}
