package agent_test

import (
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/federation-v1/federation/test/fedenv"
	"github.com/federation-v1/federation/test/memberenv"
)

// refreshAgentMember plays `kubefed join --refresh` on cluster2, which the
// federation reaches through its agent and whose Cluster records an address
// other than its context's: its ClusterRole, narrowed as an earlier join
// made it, is brought back in place, and the agent keeps its tunnel.
func refreshAgentMember(t *testing.T, u *fedenv.User, env *memberenv.Environment) {
	ctx := context.Background()
	member, err := env.Client("cluster2")
	require.NoError(t, err)
	roles := member.RbacV1().ClusterRoles()
	role, err := roles.Get(ctx, "federation-fed", metav1.GetOptions{})
	require.NoError(t, err)
	want := role.Rules
	role.Rules = slices.DeleteFunc(slices.Clone(role.Rules), func(r rbacv1.PolicyRule) bool { return slices.Contains(r.Resources, "poddisruptionbudgets") })
	require.Len(t, role.Rules, len(want)-1)
	_, err = roles.Update(ctx, role, metav1.UpdateOptions{})
	require.NoError(t, err)

	out := u.MustKubefed("join", "cluster2", "--context=fed", "--refresh")
	assert.Equal(t, "ClusterRole federation-fed updated: +1 rules; new rights on poddisruptionbudgets.policy\n"+
		`cluster "cluster2" refreshed`+"\n", out)
	got, err := roles.Get(ctx, "federation-fed", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, want, got.Rules)
	assert.Equal(t, `cluster "cluster2" is up to date: nothing changed`+"\n", u.MustKubefed("join", "cluster2", "--context=fed", "--refresh"))
	rows, err := u.ClusterTable(ctx, "fed")
	require.NoError(t, err)
	assert.Equal(t, "Ready", rows["cluster2"][0], "the agent keeps its tunnel")
}
