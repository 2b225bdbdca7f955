// Package gitops_test checks end to end that a real GitOps engine manages
// the federation as it manages a cluster: Flux's source-controller and
// kustomize-controller, built from their modules and run against a member as
// their host, sync a directory of a git repository (served over smart HTTP
// on loopback) into the federation through a kubeconfig with a federation
// ServiceAccount's token; the federation propagates what they apply, and
// their prune removes what the repository no longer holds, from the
// federation and every member.
//
// Argo CD is not used: its gitops-engine module (v3.6.x) fails go get from
// this project's module proxy, so Argo CD cannot be built here
// (docs/guide/api-server.md, "GitOps").
package gitops_test

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
