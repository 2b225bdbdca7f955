// Package workloads_test checks end to end that Deployments and Jobs are
// divided over member clusters, move when a cluster fails or cannot
// schedule, and report one status that kubectl understands: a local
// federation with three real member clusters, driven with the real kubectl.
package workloads_test

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
