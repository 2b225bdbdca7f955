// Package overrides_test checks per-cluster overrides end to end: a local
// federation with three real member clusters, the rules written with the
// real kubectl, each member's copy read from the member.
package overrides_test

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
