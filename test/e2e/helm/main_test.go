// Package helm_test checks end to end that the real Helm v3 works against
// the federation: charts installed, upgraded, rolled back and uninstalled
// with --wait through the federation's kubeconfig context, their objects
// propagated to three real member clusters, and Helm's release records kept
// at the federation.
package helm_test

import (
	"os"
	"testing"

	"github.com/federation-v1/federation/test/fedenv"
)

// binDir holds kubefed and the control plane binaries, built once.
var binDir string

func TestMain(m *testing.M) {
	os.Exit(fedenv.RunMain(m, &binDir))
}
