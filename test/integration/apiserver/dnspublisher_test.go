package apiserver

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	corev1apply "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// TestDNSPublisherPolicy checks that the controller manager may keep the
// DNS ConfigMap federation-system/federation-dns by server-side apply (the
// dns-publisher controller: create, change, watch it), and create no other
// ConfigMap, by apply or create; nor may a tenant write it.
func TestDNSPublisherPolicy(t *testing.T) {
	ctx := t.Context()
	const ns, name = "federation-system", "federation-dns"
	as := func(user string, groups ...string) kubernetes.Interface {
		cfg, err := clientcmd.BuildConfigFromFlags("", shared.tokenConfig)
		require.NoError(t, err)
		cfg.Impersonate.UserName, cfg.Impersonate.Groups = user, groups
		client, err := kubernetes.NewForConfig(cfg)
		require.NoError(t, err)
		return client
	}
	admin := as("admin", "system:masters").CoreV1().ConfigMaps(ns)
	cm := as(controllerManager).CoreV1().ConfigMaps(ns)
	apply := func(name, server string) *corev1apply.ConfigMapApplyConfiguration {
		return corev1apply.ConfigMap(name, ns).WithData(map[string]string{"zone": "example.com.", "server": server})
	}
	opts := metav1.ApplyOptions{FieldManager: "federation-controller-manager", Force: true}
	t.Cleanup(func() {
		for _, n := range []string{name, "other"} {
			_ = admin.Delete(ctx, n, metav1.DeleteOptions{})
		}
	})

	// Created by apply, changed by apply, read, watched by name.
	_ = admin.Delete(ctx, name, metav1.DeleteOptions{})
	_, err := cm.Apply(ctx, apply(name, "10.0.0.53:53"), opts)
	require.NoError(t, err, "create by apply")
	_, err = cm.Apply(ctx, apply(name, "10.0.0.54:53"), opts)
	require.NoError(t, err, "change by apply")
	got, err := cm.Get(ctx, name, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, "10.0.0.54:53", got.Data["server"])
	byName := metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()}
	_, err = cm.List(ctx, byName)
	require.NoError(t, err, "list by name")
	w, err := cm.Watch(ctx, byName)
	require.NoError(t, err, "watch by name")
	w.Stop()

	// It creates no other ConfigMap: not by apply, not by create, not in
	// another namespace. (It reads, updates and patches every ConfigMap,
	// a federated type, and deletes tombstones: its other roles.)
	_, err = cm.Apply(ctx, apply("other", "10.0.0.53:53"), opts)
	assert.True(t, apierrors.IsForbidden(err), "create another by apply: %v", err)
	_, err = cm.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "other"}}, metav1.CreateOptions{})
	assert.True(t, apierrors.IsForbidden(err), "create another: %v", err)
	_, err = cm.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name + "-2"}}, metav1.CreateOptions{})
	assert.True(t, apierrors.IsForbidden(err), "create another: %v", err)
	_, err = as(controllerManager).CoreV1().ConfigMaps("default").Apply(ctx,
		corev1apply.ConfigMap(name, "default").WithData(map[string]string{"zone": "x."}), opts)
	assert.True(t, apierrors.IsForbidden(err), "create by apply in default: %v", err)
	_, err = admin.Get(ctx, "other", metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "other: %v", err)

	// A tenant, even an editor elsewhere, cannot point members' DNS anywhere.
	tenant := as("mallory", "system:authenticated").CoreV1().ConfigMaps(ns)
	_, err = tenant.Apply(ctx, apply(name, "203.0.113.1:53"), metav1.ApplyOptions{FieldManager: "mallory", Force: true})
	assert.True(t, apierrors.IsForbidden(err), "tenant apply: %v", err)
	got, err = admin.Get(ctx, name, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, "10.0.0.54:53", got.Data["server"])
}
