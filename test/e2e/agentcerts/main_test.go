// Package agentcerts_test checks, with a real local federation (kubefed
// init --local: federation-apiserver and federation-controller-manager),
// how a federation agent gets and keeps its own identity: kubefed token
// create, agentcredential.FetchCA and Start, the controller manager's
// approval and signing, kubefed accept, renewal, and what the agent's
// identity may not do.
package agentcerts_test

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
