// Package crds_test checks custom resources end to end: a local federation
// with three real member clusters, CustomResourceDefinitions and custom
// resources written with the real kubectl at the federation, their copies
// and status read and written in the members.
package crds_test

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
