// Package proxy_test looks into members through the federation, as a
// person with stock kubectl would: a local federation with a member it
// dials (cluster1) and one reached through its agent (cluster2), member
// contexts written by kubefed kubeconfig, pods simulated by kwok (which
// also serves their logs, exec and port-forward), an admin and tenants
// bound to edit and view in one namespace.
package proxy_test

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
