package kubefed

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stypes "k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	kubefake "k8s.io/client-go/kubernetes/fake"

	"github.com/federation-v1/federation/pkg/federatedtypes"
	"github.com/federation-v1/federation/pkg/tombstone"
)

// runKubefed runs kubefed with args and returns its output and error.
func runKubefed(args ...string) (string, error) {
	var out bytes.Buffer
	cmd := NewCommand(&out, &out)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), err
}

func TestBackupRestoreAndStraysFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"backup", "fed"}, "-o/--output"},
		{[]string{"backup"}, "accepts 1 arg"},
		{[]string{"restore", "fed"}, "-f/--filename"},
		{[]string{"restore", "fed", "other"}, "accepts 1 arg"},
		{[]string{"strays"}, "--context"},
		{[]string{"strays", "--context=fed", "extra"}, "unknown command"},
	} {
		_, err := runKubefed(tc.args...)
		assert.ErrorContains(t, err, tc.want, "%v", tc.args)
	}
	_, err := runKubefed("backup", "no-such-federation", "-o", "f", "--data-dir", t.TempDir())
	assert.ErrorContains(t, err, "no local federation", "flags pass, then the plane is looked for")
}

func TestStraysDefaultsTheFederationNameToTheContext(t *testing.T) {
	o := &strayOptions{context: "fed"}
	require.NoError(t, o.validate())
	assert.Equal(t, "fed", o.federation)
	o = &strayOptions{context: "ctx", federation: "fed"}
	require.NoError(t, o.validate())
	assert.Equal(t, "fed", o.federation)
}

func TestPrintStrays(t *testing.T) {
	var out bytes.Buffer
	printStrays(&out, nil)
	assert.Equal(t, "No stray copies.\n", out.String())

	out.Reset()
	printStrays(&out, []stray{
		{cluster: "cluster2", typ: federatedtypes.ByName("configmaps"), obj: cm("default", "b")},
		{cluster: "cluster1", typ: federatedtypes.ByName("configmaps"), obj: cm("default", "b")},
	})
	lines := bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n"))
	require.Len(t, lines, 3)
	assert.Regexp(t, `^CLUSTER\s+KIND\s+NAMESPACE\s+NAME\s+AGE$`, string(lines[0]))
	assert.Regexp(t, `^cluster1\s+ConfigMap\s+default\s+b\s+`, string(lines[1]))
	assert.Regexp(t, `^cluster2\s+ConfigMap\s+default\s+b\s+`, string(lines[2]))
}

func cm(ns, name string) *unstructured.Unstructured {
	o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}
	o.SetNamespace(ns)
	o.SetName(name)
	o.SetUID(k8stypes.UID("uid-" + name))
	o.SetResourceVersion("1")
	return o
}

func TestCleanDeletesOnlyStraysStillWithoutAFederatedObject(t *testing.T) {
	ctx := context.Background()
	cms := federatedtypes.ByName("configmaps")
	nss := federatedtypes.ByName("namespaces")
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace"}}
	ns.SetName("team")
	listKinds := map[schema.GroupVersionResource]string{cms.Resource: "ConfigMapList", nss.Resource: "NamespaceList"}
	// "back" was created again at the federation since it was listed.
	fed := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds, cm("default", "back"))
	member := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds,
		cm("default", "gone"), cm("default", "back"), ns)
	f := &strayFinder{fed: fed, name: "fed", uid: "u"}
	var out bytes.Buffer
	require.NoError(t, f.clean(ctx, &out, []stray{
		{cluster: "cluster1", typ: cms, obj: cm("default", "gone"), member: member},
		{cluster: "cluster1", typ: cms, obj: cm("default", "back"), member: member},
		{cluster: "cluster1", typ: nss, obj: ns, member: member},
	}))
	assert.Contains(t, out.String(), "deleted ConfigMap default/gone in cluster cluster1")
	assert.Contains(t, out.String(), "kept ConfigMap default/back in cluster cluster1: its federated object exists again")
	assert.Contains(t, out.String(), "left Namespace team in cluster cluster1")
	left, err := member.Resource(cms.Resource).Namespace("default").List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, left.Items, 1)
	assert.Equal(t, "back", left.Items[0].GetName())
	_, err = member.Resource(nss.Resource).Get(ctx, "team", metav1.GetOptions{})
	assert.NoError(t, err, "namespaces are never deleted")
}

func TestACopyWhoseObjectHasATombstoneIsNoStray(t *testing.T) {
	cms := federatedtypes.ByName("configmaps")
	r := tombstone.New(cms.Resource.GroupResource(), cm("default", "deleted"), time.Now())
	kube := kubefake.NewSimpleClientset(&corev1.ConfigMap{ObjectMeta: r.Meta(), Data: r.Data()})
	deleting, err := pendingDeletions(context.Background(), kube)
	require.NoError(t, err)
	f := &strayFinder{deleting: deleting}
	assert.True(t, f.beingDeleted(cms, cm("default", "deleted")))
	assert.False(t, f.beingDeleted(cms, cm("default", "other")))
	assert.False(t, f.beingDeleted(federatedtypes.ByName("secrets"), cm("default", "deleted")), "another type's")
}

func TestStraysListTheFederatedObjectsOnceAType(t *testing.T) {
	ctx := context.Background()
	cms := federatedtypes.ByName("configmaps")
	fed := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{cms.Resource: "ConfigMapList"}, cm("default", "kept"), cm("team", "kept"))
	f := &strayFinder{fed: fed, name: "fed", uid: "u"}
	for _, c := range []struct {
		copy *unstructured.Unstructured
		gone bool
	}{
		{cm("default", "kept"), false},
		{cm("team", "kept"), false},
		{cm("default", "orphan"), true},
		{cm("other", "kept"), true},
	} {
		gone, err := f.listedGone(ctx, cms, c.copy)
		require.NoError(t, err)
		assert.Equal(t, c.gone, gone, "%s/%s", c.copy.GetNamespace(), c.copy.GetName())
	}
	assert.Len(t, fed.Actions(), 1, "one list for every copy of the type: %v", fed.Actions())
}
