// Package conformance_test judges the federation by Kubernetes' own
// conformance tests: it builds e2e.test at the served Kubernetes version,
// starts a local federation joined to three real member clusters, and runs
// the conformance tests that need only what the federation serves (see
// selection_test.go), each of which must pass. It also checks that kubectl
// auth can-i and whoami answer at the federation.
package conformance_test

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
