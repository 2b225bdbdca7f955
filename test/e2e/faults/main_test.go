// Package faults_test is the fault matrix: an HA federation (3 etcd
// members, 2 federation apiservers, 2 controller managers) joined to 3 real
// member clusters, and six faults struck one after another while 1,000
// federated ConfigMaps and 30 Deployments are being written. After each, a
// verifier checks that every federated object has exactly its copies (none
// lost, none duplicated, nothing stuck) and measures how long that took.
// The table of results goes to .run/faults/results.md and docs/reliability.md.
package faults_test

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
