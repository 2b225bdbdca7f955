package propagation

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The propagation controller is split into rooms that depend one way: the
// engine (this package) uses the rest, and none of them uses it. Package
// plan is pure (no client, no clock, no other room); the writer knows
// nothing of the engine (what the engine must do after a write, it takes
// from the writer: writer.Outcome); its queues know nothing of the writer.
func TestRoomsDependOneWay(t *testing.T) {
	const module = "github.com/federation-v1/federation/pkg/controllers/propagation"
	for _, room := range []struct {
		dir       string
		forbidden []string
		noClock   bool
	}{
		{dir: "plan", forbidden: []string{module + "\x00", "k8s.io/client-go/", module + "/writer"}, noClock: true},
		{dir: "writer", forbidden: []string{module + "\x00", module + "/release"}},
		{dir: "writer/guard", forbidden: []string{module + "\x00", module + "/writer\x00", module + "/release"}},
		{dir: "release", forbidden: []string{module + "\x00"}},
		{dir: "writer/internal/queues", forbidden: []string{module + "\x00", module + "/writer\x00"}},
	} {
		files, err := filepath.Glob(filepath.Join(room.dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range f.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				for _, bad := range room.forbidden {
					// "\x00" ends a path that must match whole.
					if whole, ok := strings.CutSuffix(bad, "\x00"); ok && p == whole || !ok && strings.HasPrefix(p, bad) {
						t.Errorf("%s imports %s: room %s must not", path, p, room.dir)
					}
				}
			}
			if !room.noClock {
				continue
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok {
					if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "time" && sel.Sel.Name == "Now" {
						t.Errorf("%s reads the clock: room %s is pure", path, room.dir)
					}
				}
				return true
			})
		}
	}
}

// "In sync" is decided once per copy and reconcile: by plan.Judge in the
// engine's compare, or, where the cache could not tell, on the writer's
// live read; nowhere else.
func TestInSyncIsJudgedInOnePlace(t *testing.T) {
	want := map[string]bool{"reconcile.go": true, filepath.Join("writer", "memberwrite.go"): true}
	for _, dir := range []string{".", "writer", "writer/guard", "release"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if judges := strings.Count(string(src), "plan.Judge("); judges > 1 || judges == 1 && !want[path] {
				t.Errorf("%s calls plan.Judge %d times: only the reconcile's compare and the writer's live read judge", path, judges)
			}
		}
	}
}

// The guard only reads: it gets no member client, and calls no writing
// verb of the federation's.
func TestTheGuardWritesNothing(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("writer", "guard", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	writes := map[string]bool{"Create": true, "Update": true, "UpdateStatus": true, "Patch": true, "Apply": true, "Delete": true, "DeleteCollection": true}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			// A client's verbs end a chain: x.Resource(r).Namespace(ns).Delete.
			if _, chained := sel.X.(*ast.CallExpr); chained && writes[sel.Sel.Name] || sel.Sel.Name == "Client" {
				t.Errorf("%s calls %s: the guard must not write", path, sel.Sel.Name)
			}
			return true
		})
	}
}
