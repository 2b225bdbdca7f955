// Package rbac_test checks, against real member clusters, that namespaced
// Roles and RoleBindings propagate like the other types (placement,
// drift, deletion) while the federation's identity in a member stays
// bounded: it writes RBAC only in the namespaces it created there, never
// grants escalate, bind or impersonate, binds no ClusterRole beyond admin,
// edit and view, and never writes ClusterRoles or ClusterRoleBindings. The
// refusals are tried as an attacker would: a tenant at the federation with
// its own credentials through kubectl, and the federation's own identity
// straight against a member.
package rbac_test

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
