// Package podman_test runs the control plane in a host cluster end to end:
// the image built by `make image`, the chart's pods, as kubefed init
// --host-cluster-context creates them in a real member (whose kwok nodes
// run no container) and as helm renders them, run for real by
// `podman kube play`; the federation they make joins the other members,
// propagates a Deployment and answers DNS, with kubectl through the
// context init writes.
package podman_test

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
