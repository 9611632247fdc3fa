package facade

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestEveryCodeIsDeclaredInErrorsGo: an Error whose Code is written out
// ("not_in_class") anywhere but newCode would be a code Codes does not
// list, so no completeness test (HTTP table, OpenAPI document, the page's
// words) would see it. Every Go file of the module is read; tests may make
// up codes of their own.
func TestEveryCodeIsDeclaredInErrorsGo(t *testing.T) {
	eachErrorLiteral(t, func(at token.Position, lit *ast.CompositeLit) {
		if v := field(lit, "Code"); v != nil && isStringLiteral(v) {
			t.Errorf("%s: an Error with a code of its own; declare it in errors.go with newCode", at)
		}
	})
	if len(Codes()) < 50 {
		t.Errorf("Codes lists %d codes; the declarations were not all seen", len(Codes()))
	}
}

// TestRetryAfterIsSetByRetryLaterOnly: an error that tells the client when
// to retry is built by RetryLater, which rounds the wait as the header
// carries it; an Error literal setting RetryAfter outside errors.go (where
// Wrap keeps a kind's) would skip that rule (a wait of 0 tells a client to
// retry at once).
func TestRetryAfterIsSetByRetryLaterOnly(t *testing.T) {
	eachErrorLiteral(t, func(at token.Position, lit *ast.CompositeLit) {
		if field(lit, "RetryAfter") != nil && at.Filename != "errors.go" {
			t.Errorf("%s: an Error carrying a Retry-After built by hand; use RetryLater", at)
		}
	})
	for _, c := range []struct{ after, want time.Duration }{
		{1500 * time.Millisecond, 2 * time.Second}, {3 * time.Second, 3 * time.Second},
		{0, time.Second}, {-4 * time.Second, time.Second}, {time.Millisecond, time.Second},
	} {
		err := RetryLater(ErrRateLimited, c.after, nil)
		if err.RetryAfter != c.want || !errors.Is(err, ErrRateLimited) {
			t.Errorf("RetryLater(%v): %v after %v, want %v", c.after, err, err.RetryAfter, c.want)
		}
	}
}

// TestRefusalsAreBuiltByRefuse: an error naming what was wrong in the
// input is built by Refuse or RefuseEach, never as an Error literal
// listing its Invalid items outside errors.go, so each refusal keeps its
// kind's code and nothing else.
func TestRefusalsAreBuiltByRefuse(t *testing.T) {
	eachErrorLiteral(t, func(at token.Position, lit *ast.CompositeLit) {
		if field(lit, "Invalid") != nil && at.Filename != "errors.go" {
			t.Errorf("%s: an Error listing what was invalid built by hand; use Refuse or RefuseEach", at)
		}
	})
	err := RefuseEach(ErrBadParameter, ReasonReversed, "from", "to")
	want := []Invalid{{Parameter: "from", Reason: ReasonReversed}, {Parameter: "to", Reason: ReasonReversed}}
	if !errors.Is(err, ErrBadParameter) || len(err.Invalid) != 2 || err.Invalid[0] != want[0] || err.Invalid[1] != want[1] {
		t.Errorf("RefuseEach: %v %+v, want bad_parameter %+v", err, err.Invalid, want)
	}
}

// eachErrorLiteral calls found with every Error composite literal in the
// module's Go files (tests, which may make up errors of their own, aside).
func eachErrorLiteral(t *testing.T, found func(token.Position, *ast.CompositeLit)) {
	t.Helper()
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != "." && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.CompositeLit); ok && isErrorType(lit.Type) {
				found(fset.Position(lit.Pos()), lit)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// field returns the value lit gives key, or nil.
func field(lit *ast.CompositeLit, key string) ast.Expr {
	for _, el := range lit.Elts {
		if kv, ok := el.(*ast.KeyValueExpr); ok && isIdent(kv.Key, key) {
			return kv.Value
		}
	}
	return nil
}

// isErrorType: Error in this package, facade.Error elsewhere.
func isErrorType(e ast.Expr) bool {
	if sel, ok := e.(*ast.SelectorExpr); ok {
		return isIdent(sel.X, "facade") && sel.Sel.Name == "Error"
	}
	return isIdent(e, "Error")
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

// isStringLiteral: "x", or a conversion of one (facade.Code("x")).
func isStringLiteral(e ast.Expr) bool {
	switch v := e.(type) {
	case *ast.BasicLit:
		return v.Kind == token.STRING
	case *ast.CallExpr:
		return len(v.Args) == 1 && isStringLiteral(v.Args[0])
	}
	return false
}
