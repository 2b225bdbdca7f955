// Package leaderelection_test runs two controller managers against one
// local federation with real member clusters: one leads and writes, the
// other stands by and writes nothing; killed, the leader is replaced
// within its lease; stopped with SIGTERM, it hands over at once.
package leaderelection_test

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
