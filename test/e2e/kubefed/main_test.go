// Package kubefed_test drives the built kubefed binary as a person would:
// init a local federation, stop, start and delete it, join and unjoin real
// member clusters, checked with the real kubectl.
package kubefed_test

import (
	"os"
	"testing"

	"github.com/federation-v1/federation/test/fedenv"
)

// binDir holds kubefed and the control plane binaries, built once; kubefed
// finds the others beside itself.
var binDir string

func TestMain(m *testing.M) {
	os.Exit(fedenv.RunMain(m, &binDir))
}
