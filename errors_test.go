package facade

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestEveryCodeIsDeclaredInErrorsGo: an Error whose Code is written out
// ("not_in_class") anywhere but newCode would be a code Codes does not
// list, so no completeness test (HTTP table, OpenAPI document, the page's
// words) would see it. Every Go file of the module is read; tests may make
// up codes of their own.
func TestEveryCodeIsDeclaredInErrorsGo(t *testing.T) {
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
				for _, el := range lit.Elts {
					if kv, ok := el.(*ast.KeyValueExpr); ok && isIdent(kv.Key, "Code") && isStringLiteral(kv.Value) {
						t.Errorf("%s: an Error with a code of its own; declare it in errors.go with newCode",
							fset.Position(lit.Pos()))
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(Codes()) < 50 {
		t.Errorf("Codes lists %d codes; the declarations were not all seen", len(Codes()))
	}
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
