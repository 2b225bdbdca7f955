package kubefed_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/federation-v1/federation/test/fedenv"
	"github.com/federation-v1/federation/test/memberenv"
)

var (
	configMaps   = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	statefulSets = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}
)

// refreshAfterUpgrade plays an upgrade on cluster1, joined to federation
// fed: the member's ClusterRole and policy are narrowed to what an earlier
// version's join made (no StatefulSets, a validation fewer), so a federated
// StatefulSet fails there with a 403; `kubefed join --refresh` brings them
// back in place, the StatefulSet arrives, and a second refresh writes
// nothing. No copy is rewritten, nor the account's token.
func refreshAfterUpgrade(t *testing.T, u *fedenv.User, env *memberenv.Environment) {
	ctx := context.Background()
	f := fedenv.NewFixture(t, u, env.Clients(nil), "fed", 30*time.Second)
	member, err := env.Client("cluster1")
	require.NoError(t, err)
	rbac, admission := member.RbacV1(), member.AdmissionregistrationV1()

	f.Apply(`apiVersion: v1
kind: Namespace
metadata: {name: refresh}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: keep, namespace: refresh}
data: {a: b}
`)
	f.WaitIn([]string{"cluster1"}, configMaps, "refresh", "keep", nil)
	copyVersion := func() string {
		cm, err := member.CoreV1().ConfigMaps("refresh").Get(ctx, "keep", metav1.GetOptions{})
		require.NoError(t, err)
		return cm.ResourceVersion
	}
	copyBefore := copyVersion()
	fedSecret := func() string {
		out := f.Kubectl("get", "cluster", "cluster1", "-o", "jsonpath={.spec.secretRef.name}")
		return f.Kubectl("get", "secret", "-n", "federation-system", out, "-o", "jsonpath={.metadata.resourceVersion}")
	}
	fedSecretBefore := fedSecret()

	// What an earlier version's join left.
	role, err := rbac.ClusterRoles().Get(ctx, "federation-fed", metav1.GetOptions{})
	require.NoError(t, err)
	wantRules := role.Rules
	role.Rules = slices.Clone(role.Rules)
	for i, r := range role.Rules {
		if slices.Equal(r.APIGroups, []string{"apps"}) && slices.Contains(r.Resources, "statefulsets") && slices.Contains(r.Verbs, "create") {
			role.Rules[i].Resources = slices.DeleteFunc(slices.Clone(r.Resources), func(s string) bool { return s == "statefulsets" })
		}
	}
	_, err = rbac.ClusterRoles().Update(ctx, role, metav1.UpdateOptions{})
	require.NoError(t, err)
	policy, err := admission.ValidatingAdmissionPolicies().Get(ctx, "federation-fed", metav1.GetOptions{})
	require.NoError(t, err)
	wantValidations := policy.Spec.Validations
	policy.Spec.Validations = slices.Clone(wantValidations[:len(wantValidations)-1])
	_, err = admission.ValidatingAdmissionPolicies().Update(ctx, policy, metav1.UpdateOptions{})
	require.NoError(t, err)

	f.Apply(`apiVersion: apps/v1
kind: StatefulSet
metadata: {name: web, namespace: refresh}
spec:
  replicas: 3
  serviceName: web
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: registry.k8s.io/pause:3.10}]}
`)
	f.WaitIn([]string{"cluster2"}, statefulSets, "refresh", "web", nil)
	f.WaitEvents("web", "in cluster cluster1 failed", "forbidden")
	sts, err := f.MemberObject(ctx, "cluster1", statefulSets, "refresh", "web")
	require.NoError(t, err)
	require.Nil(t, sts, "the narrowed member has no copy")

	dry := u.MustKubefed("join", "cluster1", "--context=fed", "--refresh", "--dry-run")
	assert.Contains(t, dry, "ValidatingAdmissionPolicy federation-fed would be updated: +1 validations\n")
	assert.Contains(t, dry, "ClusterRole federation-fed would be updated: +1 rules, -1 rules; new rights on statefulsets.apps\n")
	assert.Contains(t, dry, `dry run: nothing changed in cluster "cluster1"`)
	got, err := rbac.ClusterRoles().Get(ctx, "federation-fed", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, role.Rules, got.Rules, "a dry run changes nothing")

	out := u.MustKubefed("join", "cluster1", "--context=fed", "--refresh")
	assert.Equal(t, "ValidatingAdmissionPolicy federation-fed updated: +1 validations\n"+
		"ClusterRole federation-fed updated: +1 rules, -1 rules; new rights on statefulsets.apps\n"+
		`cluster "cluster1" refreshed`+"\n", out)
	got, err = rbac.ClusterRoles().Get(ctx, "federation-fed", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, wantRules, got.Rules, "the role is back")
	gotPolicy, err := admission.ValidatingAdmissionPolicies().Get(ctx, "federation-fed", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, wantValidations, gotPolicy.Spec.Validations, "the policy is back")
	f.WaitInWithin(45*time.Second, []string{"cluster1"}, statefulSets, "refresh", "web", nil)

	versions := func() map[string]string {
		rv := map[string]string{}
		for _, name := range []string{"federation-fed", "federation-fed-namespace-rbac"} {
			r, err := rbac.ClusterRoles().Get(ctx, name, metav1.GetOptions{})
			require.NoError(t, err)
			rv["ClusterRole "+name] = r.ResourceVersion
		}
		b, err := rbac.ClusterRoleBindings().Get(ctx, "federation-fed", metav1.GetOptions{})
		require.NoError(t, err)
		p, err := admission.ValidatingAdmissionPolicies().Get(ctx, "federation-fed", metav1.GetOptions{})
		require.NoError(t, err)
		pb, err := admission.ValidatingAdmissionPolicyBindings().Get(ctx, "federation-fed", metav1.GetOptions{})
		require.NoError(t, err)
		sa, err := member.CoreV1().ServiceAccounts("federation-system").Get(ctx, "federation-fed", metav1.GetOptions{})
		require.NoError(t, err)
		token, err := member.CoreV1().Secrets("federation-system").Get(ctx, "federation-fed-token", metav1.GetOptions{})
		require.NoError(t, err)
		rv["ClusterRoleBinding"], rv["ValidatingAdmissionPolicy"], rv["ValidatingAdmissionPolicyBinding"] = b.ResourceVersion, p.ResourceVersion, pb.ResourceVersion
		rv["ServiceAccount"], rv["token Secret"] = sa.ResourceVersion, token.ResourceVersion
		return rv
	}
	before := versions()
	again := u.MustKubefed("join", "cluster1", "--context=fed", "--refresh")
	assert.Equal(t, `cluster "cluster1" is up to date: nothing changed`+"\n", again)
	assert.Equal(t, before, versions(), "a second refresh writes nothing in the member")
	assert.Equal(t, copyBefore, copyVersion(), "no copy was rewritten")
	assert.Equal(t, fedSecretBefore, fedSecret(), "the credentials stay as they are")

	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"join", "ghost", "--context=fed", "--cluster-context=cluster1", "--refresh"},
			`cluster "ghost" is not joined to federation "fed"; join it without --refresh`},
		{[]string{"join", "cluster1", "--context=fed", "--cluster-context=cluster2", "--refresh"},
			`but cluster "cluster1" was joined at`},
		{[]string{"join", "cluster1", "--context=fed", "--refresh", "--connection=agent"}, "--connection is not for --refresh"},
	} {
		out, err := u.Kubefed(tt.args...)
		assert.Error(t, err, "kubefed %v", tt.args)
		assert.Contains(t, out, tt.want, "kubefed %v", tt.args)
	}
}
