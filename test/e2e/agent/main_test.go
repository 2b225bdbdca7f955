// Package agent_test runs members the federation cannot dial: an agent in
// the member dials out to the federation apiserver and holds a tunnel,
// and propagation, status, health, DNS and deletion go through it,
// beside a member the federation dials directly.
package agent_test

import (
	"os"
	"testing"

	"github.com/federation-v1/federation/test/fedenv"
)

// binDir holds kubefed, the control plane and the agent, built once.
var binDir string

func TestMain(m *testing.M) {
	os.Exit(fedenv.RunMain(m, &binDir))
}
