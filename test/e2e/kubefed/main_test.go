// Package kubefed_test drives the built kubefed binary as a person would:
// init a local federation, stop, start and delete it, join and unjoin real
// member clusters, checked with the real kubectl.
package kubefed_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/federation-v1/federation/test/fedenv"
)

// binDir holds kubefed and the control plane binaries, built once; kubefed
// finds the others beside itself.
var binDir string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "kubefed-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if binDir, err = fedenv.BuildBinaries(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}
