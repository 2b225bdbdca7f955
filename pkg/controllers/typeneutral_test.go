// Package controllers_test holds checks over every controller package.
package controllers_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/federation-v1/federation/pkg/federatedtypes"
)

// What one federated type does differently is said in its entry of
// federatedtypes.All, never by a controller branching on the type: adding
// a type is one table entry (and its tests). This test fails on controller
// code (not tests) that branches on a federated type by name: a map keyed
// by a type's kind or resource name, a case or comparison with one, or a
// comparison or switch of the controller's own type (typ.Name, typ.Kind,
// typ.Resource) with a package's variable (membercluster.NamespacesResource,
// say). Naming a resource to read or write it (the ConfigMaps tombstones
// are kept in) is no branch.
func TestNoControllerBranchesOnAFederatedType(t *testing.T) {
	names := map[string]bool{}
	for _, typ := range federatedtypes.All {
		names[typ.Kind], names[typ.Name] = true, true
	}
	named := func(e ast.Expr) (string, bool) {
		lit, ok := e.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(lit.Value)
		return s, err == nil && names[s]
	}
	fset := token.NewFileSet()
	var found []string
	report := func(n ast.Node, what string) {
		found = append(found, fset.Position(n.Pos()).String()+": "+what)
	}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CompositeLit:
				if _, isMap := n.Type.(*ast.MapType); isMap {
					for _, e := range n.Elts {
						if kv, ok := e.(*ast.KeyValueExpr); ok {
							if s, ok := named(kv.Key); ok {
								report(kv, "a map keyed by the type "+s)
							}
						}
					}
				}
			case *ast.CaseClause:
				for _, e := range n.List {
					if s, ok := named(e); ok {
						report(e, "a case of the type "+s)
					}
				}
			case *ast.BinaryExpr:
				if n.Op != token.EQL && n.Op != token.NEQ {
					break
				}
				for _, side := range []ast.Expr{n.X, n.Y} {
					if s, ok := named(side); ok {
						report(n, "a comparison with the type "+s)
					}
				}
				if ownType(n.X) && packageVar(n.Y) || ownType(n.Y) && packageVar(n.X) {
					report(n, "the controller's type compared with a package's variable")
				}
			case *ast.SwitchStmt:
				if n.Tag != nil && ownType(n.Tag) {
					report(n, "a switch on the controller's type")
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		t.Errorf("%s: say it in the type's entry of federatedtypes.All instead", f)
	}
}

// ownType reports whether e is X.typ.Name, X.typ.Kind or X.typ.Resource
// (or one of their fields): the controller's own federated type.
func ownType(e ast.Expr) bool {
	for {
		sel, ok := e.(*ast.SelectorExpr)
		if !ok {
			return false
		}
		if inner, ok := sel.X.(*ast.SelectorExpr); ok && inner.Sel.Name == "typ" {
			return sel.Sel.Name == "Name" || sel.Sel.Name == "Kind" || sel.Sel.Name == "Resource"
		}
		e = sel.X
	}
}

// packageVar reports whether e is PACKAGE.Var or one of its fields
// (federatedtypes.Namespaces.Resource), as written: a selector chain that
// starts at an identifier other than a receiver or local (which are
// lower-case one-letter names or locals, whose chains go through typ).
func packageVar(e ast.Expr) bool {
	sel, ok := e.(*ast.SelectorExpr)
	for ok {
		if id, isIdent := sel.X.(*ast.Ident); isIdent {
			return id.Obj == nil && ast.IsExported(sel.Sel.Name)
		}
		sel, ok = sel.X.(*ast.SelectorExpr)
	}
	return false
}
