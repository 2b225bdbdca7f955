// Package dns_test checks cross-cluster service discovery end to end: a local
// federation with DNS and three real member clusters in two regions, a
// federated nginx Deployment and LoadBalancer Service, and real DNS queries
// to federation-dns.
package dns_test

import (
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/federation-v1/federation/test/fedenv"
)

// binDir holds kubefed and the control plane binaries, built once.
var binDir string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	flag.Parse()
	if testing.Short() {
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "dns-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if binDir, err = fedenv.BuildBinaries(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}
