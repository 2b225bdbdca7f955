// Package upgrade_test upgrades a running federation from the previous
// release to the tree, and back, with real members, and checks that nothing
// in the members is disturbed.
package upgrade_test

import (
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/federation-v1/federation/test/fedenv"
	"github.com/federation-v1/federation/test/releases"
)

var (
	// binDir holds the tree's kubefed and control plane, built once.
	binDir string
	// previous is the previous release, built once (and cached).
	previous releases.Build
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	flag.Parse()
	if !testing.Short() {
		var err error
		if previous, err = releases.BuildPrevious(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return fedenv.RunMain(m, &binDir)
}
