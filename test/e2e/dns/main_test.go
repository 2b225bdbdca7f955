// Package dns_test checks cross-cluster service discovery end to end: a local
// federation with DNS and three real member clusters in two regions, a
// federated nginx Deployment and LoadBalancer Service, and real DNS queries
// to federation-dns.
package dns_test

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
