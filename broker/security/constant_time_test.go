package security_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// secretWords name the values a SASL exchange must compare in constant time:
// a PLAIN password, a SCRAM stored key, client proof or server signature.
var secretWords = []string{"password", "key", "proof", "signature", "secret"}

// TestSecretsComparedInConstantTime is CVE-2021-38153's test (Kafka's
// Arrays.equals on passwords and SCRAM keys leaked their prefix through
// timing): the SASL and SCRAM packages compare secrets only with
// crypto/subtle. It reads their sources and fails on bytes.Equal,
// bytes.Compare or reflect.DeepEqual, and on == or != with an operand named
// like a secret (other than against nil, "" or a number); and each package
// must call subtle.ConstantTimeCompare where it checks a credential.
func TestSecretsComparedInConstantTime(t *testing.T) {
	for _, pkg := range []string{"sasl", "scram"} {
		files, err := filepath.Glob(filepath.Join(pkg, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no sources (%v)", pkg, err)
		}
		constantTime := 0
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.CallExpr:
					switch name := selectorName(n.Fun); name {
					case "bytes.Equal", "bytes.Compare", "reflect.DeepEqual":
						t.Errorf("%s: %s compares in variable time", fset.Position(n.Pos()), name)
					case "subtle.ConstantTimeCompare":
						constantTime++
					}
				case *ast.BinaryExpr:
					if (n.Op == token.EQL || n.Op == token.NEQ) && (secretOperand(n.X, n.Y) || secretOperand(n.Y, n.X)) {
						t.Errorf("%s: a secret compared with %s", fset.Position(n.Pos()), n.Op)
					}
				}
				return true
			})
		}
		if constantTime == 0 {
			t.Errorf("%s: no subtle.ConstantTimeCompare: how are credentials checked?", pkg)
		}
	}
}

// selectorName is "pkg.Func" for a call of a package-qualified function.
func selectorName(e ast.Expr) string {
	s, ok := e.(*ast.SelectorExpr)
	if !ok {
		return ""
	}
	id, ok := s.X.(*ast.Ident)
	if !ok {
		return ""
	}
	return id.Name + "." + s.Sel.Name
}

// secretOperand reports whether x is named like a secret and other is not a
// nil, empty-string or number literal nor a len() (a presence or length
// check, not a compare).
func secretOperand(x, other ast.Expr) bool {
	if c, ok := other.(*ast.CallExpr); ok {
		if id, ok := c.Fun.(*ast.Ident); ok && id.Name == "len" {
			return false
		}
	}
	if id, ok := other.(*ast.Ident); ok && id.Name == "nil" {
		return false
	}
	if lit, ok := other.(*ast.BasicLit); ok && (lit.Kind == token.INT || lit.Value == `""`) {
		return false
	}
	var name string
	switch x := x.(type) {
	case *ast.Ident:
		name = x.Name
	case *ast.SelectorExpr:
		name = x.Sel.Name
	case *ast.CallExpr: // string(secret)
		if id, ok := x.Fun.(*ast.Ident); ok && id.Name == "string" && len(x.Args) == 1 {
			return secretOperand(x.Args[0], other)
		}
		return false
	default:
		return false
	}
	name = strings.ToLower(name)
	for _, w := range secretWords {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}
