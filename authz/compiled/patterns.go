package compiled

import (
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"

	"github.com/casbin/casbin/v2/util"
)

// matchFuncs are casbin's matching functions the index evaluates on
// r.obj and p.obj, each with casbin's exact semantics (its util package,
// v2.135.0): keyMatch (* matches anything, / included), keyMatch2 (:name
// segments, and the pattern is a regular expression), keyMatch3 ({name}
// segments, likewise), globMatch (doublestar globs), regexMatch (an
// unanchored regular expression).
var matchFuncs = map[string]bool{"keyMatch": true, "keyMatch2": true, "keyMatch3": true, "globMatch": true, "regexMatch": true}

// objPattern is one p.obj as function fn reads it, prepared at load.
type objPattern struct {
	match   func(key string) bool // fn(key, p.obj)
	prefix  string                // every key it matches starts with prefix
	literal bool                  // it matches exactly one key, prefix
}

// casbin's keyMatch2 and keyMatch3 rewrite the pattern with these before
// matching it as a regular expression anchored at both ends.
var (
	keyMatch2Re = regexp.MustCompile(`:[^/]+`)
	keyMatch3Re = regexp.MustCompile(`\{[^/]+\}`)
)

// regexOf returns the regular expression casbin matches key1 against for
// fn(key1, pattern), or "" when fn matches without one.
func regexOf(fn, pattern string) string {
	switch fn {
	case "keyMatch2":
		return "^" + keyMatch2Re.ReplaceAllString(strings.ReplaceAll(pattern, "/*", "/.*"), "$1[^/]+$2") + "$"
	case "keyMatch3":
		return "^" + keyMatch3Re.ReplaceAllString(strings.ReplaceAll(pattern, "/*", "/.*"), "$1[^/]+$2") + "$"
	case "regexMatch":
		return pattern
	}
	return ""
}

// compilePattern prepares pattern for fn; an error is a pattern casbin
// fails on (it would answer every question reaching that line with an
// error).
func compilePattern(fn, pattern string) (objPattern, error) {
	switch fn {
	case "keyMatch":
		i := strings.IndexByte(pattern, '*')
		if i < 0 {
			return objPattern{match: func(k string) bool { return k == pattern }, prefix: pattern, literal: true}, nil
		}
		return objPattern{match: func(k string) bool { return util.KeyMatch(k, pattern) }, prefix: pattern[:i]}, nil
	case "globMatch":
		if _, err := util.GlobMatch("", pattern); err != nil {
			return objPattern{}, err
		}
		return objPattern{match: func(k string) bool { ok, err := util.GlobMatch(k, pattern); return ok && err == nil }, prefix: globPrefix(pattern)}, nil
	}
	expr := regexOf(fn, pattern)
	re, err := regexp.Compile(expr)
	if err != nil {
		return objPattern{}, err
	}
	prefix, literal := regexPrefix(expr)
	return objPattern{match: re.MatchString, prefix: prefix, literal: literal}, nil
}

// globPrefix is the text before a glob's first special character (and
// before any byte that is not ASCII, which the glob compares as runes),
// less a slash right before it: doublestar's "/**" also matches nothing,
// so "project:P/**" matches "project:P".
func globPrefix(pattern string) string {
	for i := 0; i < len(pattern); i++ {
		if c := pattern[i]; c >= utf8.RuneSelf || strings.IndexByte(`*?[{\`, c) >= 0 {
			return strings.TrimSuffix(pattern[:i], "/")
		}
	}
	return pattern
}

// regexPrefix returns the literal text every match of expr starts the key
// with ("" when there is none to rely on), and whether expr matches that
// text alone: ^literal$. It reads Go's own parse of expr, the one casbin's
// regexp matching uses.
func regexPrefix(expr string) (string, bool) {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil || re.Op != syntax.OpConcat || len(re.Sub) < 2 || re.Sub[0].Op != syntax.OpBeginText {
		return "", false
	}
	rest := re.Sub[1:]
	prefix := ""
	if lit := rest[0]; lit.Op == syntax.OpLiteral && lit.Flags&syntax.FoldCase == 0 {
		prefix = string(lit.Rune)
		if strings.ContainsRune(prefix, utf8.RuneError) {
			return "", false // U+FFFD also matches any invalid byte
		}
		rest = rest[1:]
	}
	return prefix, len(rest) == 1 && rest[0].Op == syntax.OpEndText
}
