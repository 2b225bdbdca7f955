// Package hostinit_test checks `kubefed init --host-cluster-context` and
// `kubefed delete --host-cluster-context` end to end, with a real member
// kube-apiserver (kwok's nodes) as the host: the objects are created,
// the load balancer's address is wired into the certificate and the
// kubeconfig, re-running init changes nothing, and delete removes it all
// but etcd's data. kwok runs no containers, so the federation itself never
// answers here (--wait-timeout=0); test/e2e/podman runs its pods for real.
package hostinit_test

import (
	"os"
	"testing"

	"github.com/federation-v1/federation/test/fedenv"
)

// binDir holds the built kubefed.
var binDir string

func TestMain(m *testing.M) {
	os.Exit(fedenv.RunMain(m, &binDir))
}
