// Package security_test plays, against a local federation with a real
// member cluster, what a hostile tenant and a careless operator would try,
// and checks that each is refused (a 4xx naming the reason, or no effect)
// while the tenant's own work in its namespace propagates as before. Each
// attack is a subtest of TestSecurity; the files of this package register
// theirs in attacks.
package security_test

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
