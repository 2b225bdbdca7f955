package membercluster

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	kubeinformers "k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	metadatafake "k8s.io/client-go/metadata/fake"
	"k8s.io/client-go/rest"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	fedfake "github.com/federation-v1/federation/pkg/generated/clientset/versioned/fake"
	fedinformers "github.com/federation-v1/federation/pkg/generated/informers/externalversions"
	"github.com/federation-v1/federation/pkg/poll"
)

// countingHandler counts what the manager tells it.
type countingHandler struct{ changed, clusters atomic.Int32 }

func (h *countingHandler) MemberChanged(string, schema.GroupVersionResource, *unstructured.Unstructured) {
	h.changed.Add(1)
}
func (h *countingHandler) ClustersChanged() { h.clusters.Add(1) }

func readyCluster(name string, ready corev1.ConditionStatus, labels map[string]string) *federationv1beta1.Cluster {
	return &federationv1beta1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: federationv1beta1.ClusterSpec{
			ServerAddressByClientCIDRs: []federationv1beta1.ServerAddressByClientCIDR{{ClientCIDR: "0.0.0.0/0", ServerAddress: "https://" + name}},
			SecretRef:                  &corev1.LocalObjectReference{Name: name},
		},
		Status: federationv1beta1.ClusterStatus{Conditions: []federationv1beta1.ClusterCondition{{Type: federationv1beta1.ClusterReady, Status: ready}}},
	}
}

func TestManagerFollowsClusterHealth(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fed := fedfake.NewSimpleClientset(readyCluster("c1", corev1.ConditionTrue, map[string]string{"cluster": "1"}), readyCluster("c2", corev1.ConditionFalse, nil))
	kube := kubefake.NewSimpleClientset(
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "c1", Namespace: federationv1beta1.SystemNamespace}, Data: map[string][]byte{TokenKey: []byte("t")}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "c2", Namespace: federationv1beta1.SystemNamespace}, Data: map[string][]byte{TokenKey: []byte("t")}})
	fedFactory := fedinformers.NewSharedInformerFactory(fed, 0)
	kubeFactory := kubeinformers.NewSharedInformerFactory(kube, 0)
	m, err := NewManager("fed", "fed-uid", fedFactory.Federation().V1beta1().Clusters(), kubeFactory.Core().V1().Secrets())
	require.NoError(t, err)

	// Member c1 holds one labelled ConfigMap and one that is not ours.
	configMaps := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	ours := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}
	ours.SetName("ours")
	ours.SetNamespace("ns")
	ours.SetLabels(map[string]string{federationv1beta1.FederationLabel: "fed"})
	theirs := ours.DeepCopy()
	theirs.SetName("theirs")
	theirs.SetLabels(nil)
	member := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		configMaps: "ConfigMapList", NamespacesResource: "NamespaceList"}, ours, theirs)
	// Secrets are watched for their metadata only.
	secrets := schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	secret := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "ns", Labels: map[string]string{federationv1beta1.FederationLabel: "fed"},
			Annotations: map[string]string{"a": "b"}, ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "x"}}}}
	scheme := metadatafake.NewTestScheme()
	require.NoError(t, metav1.AddMetaToScheme(scheme))
	memberMetadata := metadatafake.NewSimpleMetadataClient(scheme, secret)
	made := map[string]int{}
	m.newClient = func(c *federationv1beta1.Cluster, _ *rest.Config) (*Clients, error) {
		made[c.Name]++
		return &Clients{Dynamic: member, Metadata: memberMetadata}, nil
	}
	h := &countingHandler{}
	m.Watch(configMaps, h)
	m.WatchMetadata(secrets, h)
	fedFactory.Start(ctx.Done())
	kubeFactory.Start(ctx.Done())
	fedFactory.WaitForCacheSync(ctx.Done())
	kubeFactory.WaitForCacheSync(ctx.Done())

	require.NoError(t, m.sync(ctx, "c1"))
	require.NoError(t, m.sync(ctx, "c2"))
	require.NoError(t, poll.Until(ctx, 10*time.Second, "c1's caches", func(context.Context) error {
		if len(m.Clusters()) != 1 {
			return assert.AnError
		}
		return nil
	}))
	assert.Equal(t, "c1", m.Clusters()[0].Name, "only the Ready cluster is usable")
	assert.Equal(t, map[string]int{"c1": 1}, made)
	// Usable means the namespaces cache synced; the others follow on their own.
	require.NoError(t, poll.Until(ctx, 10*time.Second, "c1's ConfigMap cache", func(context.Context) error {
		if !m.Synced("c1", configMaps) {
			return assert.AnError
		}
		return nil
	}))
	_, ok := m.Get("c1", configMaps, "ns", "ours")
	assert.True(t, ok)
	require.NoError(t, poll.Until(ctx, 10*time.Second, "c1's Secret cache", func(context.Context) error {
		if !m.Synced("c1", secrets) {
			return assert.AnError
		}
		return nil
	}))
	cached, ok := m.Get("c1", secrets, "ns", "s")
	require.True(t, ok, "a metadata-only cache holds the object")
	assert.Equal(t, map[string]any{"apiVersion": "v1", "metadata": map[string]any{
		"name": "s", "namespace": "ns",
		"labels": map[string]any{federationv1beta1.FederationLabel: "fed"}, "annotations": map[string]any{"a": "b"},
	}}, cached.Object, "metadata only, without managed fields")
	m.mu.Lock()
	stored, _, err := m.members["c1"].informer[secrets].Informer().GetStore().GetByKey("ns/s")
	m.mu.Unlock()
	require.NoError(t, err)
	require.IsType(t, &metav1.PartialObjectMetadata{}, stored, "kept typed: a third of its size as unstructured")
	assert.Nil(t, stored.(*metav1.PartialObjectMetadata).ManagedFields)
	listed := m.List("c1", secrets, "ns", labels.Everything())
	require.Len(t, listed, 1)
	assert.Equal(t, cached.Object, listed[0].Object, "listed as got")
	metadata := m.ListMetadata("c1", secrets, "ns", labels.Everything())
	require.Len(t, metadata, 1)
	assert.Same(t, stored, metadata[0], "the cached object itself, not a conversion")
	// The fake client does not filter by label; the real one does. What
	// matters here is that the cache is keyed by namespace/name.
	_, ok = m.Get("c2", configMaps, "ns", "ours")
	assert.False(t, ok, "no cache for a cluster that is not Ready")
	require.NoError(t, poll.Until(ctx, 10*time.Second, "notifications", func(context.Context) error {
		if h.clusters.Load() < 1 || h.changed.Load() < 1 {
			return assert.AnError
		}
		return nil
	}))

	// Nothing changed: no new client, no notification.
	before := h.clusters.Load()
	require.NoError(t, m.sync(ctx, "c1"))
	assert.Equal(t, map[string]int{"c1": 1}, made)
	assert.Equal(t, before, h.clusters.Load())

	// Relabelled: everything must be looked at again.
	c1, err := fed.FederationV1beta1().Clusters().Get(ctx, "c1", metav1.GetOptions{})
	require.NoError(t, err)
	c1.Labels = map[string]string{"cluster": "9"}
	_, err = fed.FederationV1beta1().Clusters().Update(ctx, c1, metav1.UpdateOptions{})
	require.NoError(t, err)
	require.NoError(t, poll.Until(ctx, 10*time.Second, "the relabelled cluster in the cache", func(context.Context) error {
		if c, err := m.clusters.Get("c1"); err != nil || c.Labels["cluster"] != "9" {
			return assert.AnError
		}
		return nil
	}))
	require.NoError(t, m.sync(ctx, "c1"))
	assert.Equal(t, before+1, h.clusters.Load())

	// No longer Ready: caches stop.
	c1.Status.Conditions[0].Status = corev1.ConditionFalse
	_, err = fed.FederationV1beta1().Clusters().Update(ctx, c1, metav1.UpdateOptions{})
	require.NoError(t, err)
	require.NoError(t, poll.Until(ctx, 10*time.Second, "c1 not Ready in the cache", func(context.Context) error {
		if c, err := m.clusters.Get("c1"); err != nil || IsReady(c) {
			return assert.AnError
		}
		return nil
	}))
	require.NoError(t, m.sync(ctx, "c1"))
	assert.Empty(t, m.Clusters())
	_, err = m.Client("c1")
	assert.ErrorContains(t, err, "cluster c1 is not Ready")
}

// Settled holds plans back while a Ready cluster's caches are not synced,
// for at most settleTimeout; clusters that are not Ready do not count.
func TestSettledWaitsForReadyClustersCaches(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fed := fedfake.NewSimpleClientset(readyCluster("c1", corev1.ConditionTrue, nil), readyCluster("c2", corev1.ConditionFalse, nil))
	kube := kubefake.NewSimpleClientset(
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "c1", Namespace: federationv1beta1.SystemNamespace}, Data: map[string][]byte{TokenKey: []byte("t")}})
	fedFactory := fedinformers.NewSharedInformerFactory(fed, 0)
	kubeFactory := kubeinformers.NewSharedInformerFactory(kube, 0)
	m, err := NewManager("fed", "fed-uid", fedFactory.Federation().V1beta1().Clusters(), kubeFactory.Core().V1().Secrets())
	require.NoError(t, err)
	member := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{NamespacesResource: "NamespaceList"})
	scheme := metadatafake.NewTestScheme()
	require.NoError(t, metav1.AddMetaToScheme(scheme))
	m.newClient = func(*federationv1beta1.Cluster, *rest.Config) (*Clients, error) {
		return &Clients{Dynamic: member, Metadata: metadatafake.NewSimpleMetadataClient(scheme)}, nil
	}
	fedFactory.Start(ctx.Done())
	kubeFactory.Start(ctx.Done())
	fedFactory.WaitForCacheSync(ctx.Done())
	kubeFactory.WaitForCacheSync(ctx.Done())

	assert.False(t, m.Settled(), "c1 is Ready and has no caches yet")
	m.started = time.Now().Add(-settleTimeout)
	assert.True(t, m.Settled(), "c1 had its time")
	m.started = time.Now()

	require.NoError(t, m.sync(ctx, "c1"))
	require.NoError(t, poll.Until(ctx, 10*time.Second, "c1's caches", func(context.Context) error {
		if !m.Settled() {
			return assert.AnError
		}
		return nil
	}))
	assert.Len(t, m.Clusters(), 1)
}
