package apiserver

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// controllerManager is the controller manager's user name
// (federationv1beta1.ControllerManagerUser).
const controllerManager = "system:federation-controller-manager"

// leases is coordination.k8s.io/v1 Leases for the lifecycle test: served as
// by kube-apiserver, for the controller managers' leader election.
var leases = served{
	resource: "leases.coordination.k8s.io", columns: []string{"HOLDER", "AGE"},
	manifest: `apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: %[1]s, namespace: %[2]s, labels: {marker: %[3]s}}
spec: {holderIdentity: holder-%[1]s, leaseDurationSeconds: 15}
`,
}

// TestLeases drives a Lease through every kubectl verb (create, get, watch,
// label, patch, edit, explain, apply client- and server-side, delete) with
// each kubectl, and lists it across namespaces.
func TestLeases(t *testing.T) {
	for i, path := range kubectls {
		k := newKubectl(t, path, shared.tokenConfig)
		k.env = append(k.env, "KUBE_EDITOR="+editorScript(t))
		t.Run(k.version(), func(t *testing.T) {
			ns := fmt.Sprintf("leases-%d", i)
			k.must(t, "", "create", "namespace", ns)
			t.Cleanup(func() { _, _, _ = k.run("", "delete", "namespace", ns, "--wait=false") })
			lifecycle(t, k, leases, "lock", ns)

			k.must(t, fmt.Sprintf(leases.manifest, "listed", ns, "x"), "create", "-f", "-")
			out := k.must(t, "", "get", "leases", "-A")
			assert.Regexp(t, `(?m)^NAMESPACE\s+NAME\s+HOLDER\s+AGE`, out)
			assert.Regexp(t, `(?m)^`+ns+`\s+listed\s+holder-listed\s`, out)
			assert.Contains(t, k.must(t, "", "explain", "lease.spec.holderIdentity"), "holderIdentity")
		})
	}
}

// TestLeaderElectionPolicy checks that the controller manager may hold its
// leader lease in federation-system, with client-go's own Lease lock, and
// nowhere else (403); that tenants get no more on Leases there than
// Kubernetes gives; and that admin/edit/view aggregate Leases as in
// Kubernetes (edit writes them, view does not read them).
func TestLeaderElectionPolicy(t *testing.T) {
	ctx := t.Context()
	cfg, err := clientcmd.BuildConfigFromFlags("", shared.tokenConfig)
	require.NoError(t, err)
	cfg.Impersonate.UserName = controllerManager
	client, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	lock := func(ns string) resourcelock.Interface {
		l, err := resourcelock.New(resourcelock.LeasesResourceLock, ns, "policy-test", client.CoreV1(), client.CoordinationV1(),
			resourcelock.ResourceLockConfig{Identity: "cm-1"})
		require.NoError(t, err)
		return l
	}
	record := resourcelock.LeaderElectionRecord{HolderIdentity: "cm-1", LeaseDurationSeconds: 15,
		AcquireTime: metav1.NewTime(time.Now()), RenewTime: metav1.NewTime(time.Now())}

	// Allowed in federation-system: create, get, renew, release.
	own := lock("federation-system")
	require.NoError(t, own.Create(ctx, record))
	got, _, err := own.Get(ctx)
	require.NoError(t, err)
	assert.Equal(t, "cm-1", got.HolderIdentity)
	record.RenewTime = metav1.NewTime(time.Now().Add(time.Second))
	require.NoError(t, own.Update(ctx, record))
	record.HolderIdentity = ""
	require.NoError(t, own.Update(ctx, record))
	// Nothing beyond what the lock needs.
	err = client.CoordinationV1().Leases("federation-system").Delete(ctx, "policy-test", metav1.DeleteOptions{})
	assert.True(t, apierrors.IsForbidden(err), "delete in federation-system: %v", err)
	_, err = client.CoordinationV1().Leases("federation-system").List(ctx, metav1.ListOptions{})
	assert.True(t, apierrors.IsForbidden(err), "list in federation-system: %v", err)

	// Refused elsewhere, with a 403.
	for _, ns := range []string{"default", "kube-system"} {
		err := lock(ns).Create(ctx, record)
		require.Error(t, err, ns)
		var status apierrors.APIStatus
		require.ErrorAs(t, err, &status, ns)
		assert.EqualValues(t, 403, status.Status().Code, "create in %s: %v", ns, err)
		assert.Contains(t, err.Error(), `User "`+controllerManager+`" cannot create resource "leases" in API group "coordination.k8s.io" in the namespace "`+ns+`"`)
		_, _, err = lock(ns).Get(ctx)
		assert.True(t, apierrors.IsForbidden(err), "get in %s: %v", ns, err)
	}

	admin := newKubectl(t, kubectls[len(kubectls)-1], shared.tokenConfig)
	as := []string{"--as=" + controllerManager}
	assert.Equal(t, "no", canI(t, admin, append([]string{"update", "leases.coordination.k8s.io", "-n", "team-leases"}, as...)...))
	assert.Equal(t, "no", canI(t, admin, append([]string{"create", "leases.coordination.k8s.io", "--all-namespaces"}, as...)...))

	// Tenants: edit in their namespace writes Leases there, as in
	// Kubernetes; view does not read them; neither reaches federation-system.
	ns := "team-leases"
	admin.must(t, "", "create", "namespace", ns)
	t.Cleanup(func() { _, _, _ = admin.run("", "delete", "namespace", ns, "--wait=false") })
	admin.must(t, "", "create", "rolebinding", "editors", "--clusterrole=edit", "--group=lease-editors", "-n", ns)
	admin.must(t, "", "create", "rolebinding", "viewers", "--clusterrole=view", "--group=lease-viewers", "-n", ns)
	editor := []string{"--as=alice", "--as-group=lease-editors"}
	viewer := []string{"--as=bob", "--as-group=lease-viewers"}
	waitCanI(t, admin, "yes", append([]string{"create", "leases.coordination.k8s.io", "-n", ns}, editor...)...)
	assert.Equal(t, "no", canI(t, admin, append([]string{"create", "leases.coordination.k8s.io", "-n", "federation-system"}, editor...)...))
	waitCanI(t, admin, "yes", append([]string{"get", "configmaps", "-n", ns}, viewer...)...)
	assert.Equal(t, "no", canI(t, admin, append([]string{"get", "leases.coordination.k8s.io", "-n", ns}, viewer...)...))
	stderr := admin.fails(t, fmt.Sprintf(leases.manifest, "theirs", "federation-system", "x"), append([]string{"create", "-f", "-"}, editor...)...)
	assert.True(t, strings.Contains(stderr, "Forbidden") || strings.Contains(stderr, "forbidden"), stderr)
	admin.must(t, fmt.Sprintf(leases.manifest, "theirs", ns, "x"), append([]string{"create", "-f", "-"}, editor...)...)
}
