package controllers_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const controllersPath = "github.com/federation-v1/federation/pkg/controllers/"

// imports lists what the non-test files of dir import.
func imports(t *testing.T, dir string) map[string][]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			out[path] = append(out[path], p)
		}
	}
	return out
}

// Each controller declares its RBAC in a leaf rbac subpackage, and the
// apiserver's bootstrap policy reaches the controllers only through
// managerrbac: the apiserver never links a controller.
func TestControllerRBACIsALeafTheApiserverCollects(t *testing.T) {
	leaves, err := filepath.Glob(filepath.Join("*", "rbac"))
	if err != nil {
		t.Fatal(err)
	}
	if len(leaves) < 5 {
		t.Fatalf("found only %v", leaves)
	}
	for _, dir := range leaves {
		for path, ps := range imports(t, dir) {
			for _, p := range ps {
				if strings.HasPrefix(p, controllersPath) {
					t.Errorf("%s imports %s: a controller's rbac package is a leaf", path, p)
				}
			}
		}
	}
	for path, ps := range imports(t, filepath.Join("..", "apiserver")) {
		for _, p := range ps {
			if strings.HasPrefix(p, controllersPath) && p != controllersPath+"managerrbac" {
				t.Errorf("%s imports %s: the apiserver reads controllers' RBAC through managerrbac only", path, p)
			}
		}
	}
	for path, ps := range imports(t, "managerrbac") {
		for _, p := range ps {
			if strings.HasPrefix(p, controllersPath) && !strings.HasSuffix(p, "/rbac") {
				t.Errorf("%s imports %s: managerrbac collects rbac packages only", path, p)
			}
		}
	}
}
