package propagation

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The propagation controller is being split into rooms that depend one
// way: the engine (this package) uses the rest, and none of them uses it.
// This test holds what is true so far: package plan is pure (no client, no
// clock, nothing of the controller), and the member queues know nothing
// of the controller either.
func TestRoomsDependOneWay(t *testing.T) {
	const module = "github.com/federation-v1/federation/pkg/controllers/propagation"
	for _, room := range []struct {
		dir       string
		forbidden []string
		noClock   bool
	}{
		{dir: "plan", forbidden: []string{module + "\x00", "k8s.io/client-go/", module + "/memberwrites"}, noClock: true},
		{dir: "memberwrites", forbidden: []string{module + "\x00"}},
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
