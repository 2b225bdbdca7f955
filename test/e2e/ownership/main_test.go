// Package ownership_test checks, against real member clusters, that the
// federation never loses member data: it does not touch objects it did
// not create unless asked to adopt them, deletes only what it made, never
// deletes from a stale view, leaves another federation's copies alone,
// and reports copies whose federated object is gone instead of deleting
// them. Each case is a subtest of TestOwnership; the files of this
// package register theirs in cases.
package ownership_test

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
