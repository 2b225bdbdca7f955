// Package types_test checks end to end the types real applications ship
// besides workloads and Services: ServiceAccounts, StatefulSets, CronJobs,
// PodDisruptionBudgets, NetworkPolicies, PersistentVolumeClaims,
// LimitRanges and ResourceQuotas. Each is created at the federation with
// the real kubectl, placed by a cluster selector, repaired after a change
// in a member, brought back as status where it has one, and deleted from
// every member (a PersistentVolumeClaim also orphaned): a local federation
// with three real member clusters.
package types_test

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
