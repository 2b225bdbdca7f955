// Package deploy_test checks the Helm charts deploy/charts/federation (and
// federation-agent) and the plain manifests rendered from the first with the
// real Helm: lint, what each value
// set renders (names, kinds, command lines against the binaries' own
// --help, certificates), bad values refused naming the field, every rendered
// object accepted by a real member kube-apiserver with server-side dry run,
// and every metric the dashboard and alerts use served by the control plane.
package deploy_test

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
