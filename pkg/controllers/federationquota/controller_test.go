package federationquota

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic/dynamicinformer"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/federation-v1/federation/pkg/federatedtypes"
)

func configMap(ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

// TestQuotaUsageIsCountedAndRecountedAfterADeletion runs the controller
// over fake clients: a new quota gets the federation's counts in status,
// next to the members' sums it keeps; a deletion is counted again. The
// quota counts itself though the dynamic informers never see it: quotas
// are counted from the informer that announced it.
func TestQuotaUsageIsCountedAndRecountedAfterADeletion(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	q := resource.MustParse
	quota := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q", Namespace: "team"},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"count/configmaps": q("5"), "configmaps": q("5"), "requests.cpu": q("2"),
			"count/deployments.apps": q("1"), "resourcequotas": q("2")}},
		// The members' sum, written by the propagation controller.
		Status: corev1.ResourceQuotaStatus{Used: corev1.ResourceList{"requests.cpu": q("1500m")}}}
	kube := fake.NewClientset(quota)
	listKinds := map[schema.GroupVersionResource]string{}
	for _, t := range federatedtypes.All {
		listKinds[t.Resource] = t.Kind + "List"
	}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds,
		configMap("team", "a"), configMap("team", "b"), configMap("other", "c"))
	kubeInformers := informers.NewSharedInformerFactory(kube, 0)
	dynInformers := dynamicinformer.NewDynamicSharedInformerFactory(dyn, 0)

	c, err := New(ctx, kube.CoreV1(), kubeInformers.Core().V1().ResourceQuotas(), dynInformers, time.Hour, 1)
	require.NoError(t, err)
	kubeInformers.Start(ctx.Done())
	dynInformers.Start(ctx.Done())
	go func() { _ = c.Run(ctx) }()

	usedIs := func(want corev1.ResourceList) {
		t.Helper()
		var got corev1.ResourceList
		assert.Eventually(t, func() bool {
			rq, err := kube.CoreV1().ResourceQuotas("team").Get(ctx, "q", metav1.GetOptions{})
			require.NoError(t, err)
			got = rq.Status.Used
			if len(got) != len(want) {
				return false
			}
			for name, v := range want {
				if v.Cmp(got[name]) != 0 {
					return false
				}
			}
			return true
		}, 10*time.Second, 20*time.Millisecond, "want %v", want)
		if t.Failed() {
			t.Fatalf("used is %v", got)
		}
	}
	usedIs(corev1.ResourceList{"count/configmaps": q("2"), "configmaps": q("2"), "count/deployments.apps": q("0"), "resourcequotas": q("1"), "requests.cpu": q("1500m")})

	require.NoError(t, dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace("team").
		Delete(ctx, "a", metav1.DeleteOptions{}))
	usedIs(corev1.ResourceList{"count/configmaps": q("1"), "configmaps": q("1"), "count/deployments.apps": q("0"), "resourcequotas": q("1"), "requests.cpu": q("1500m")})

	rq, err := kube.CoreV1().ResourceQuotas("team").Get(ctx, "q", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, quota.Spec.Hard, rq.Status.Hard)
}

func TestCountedListsTheNamespacedFederatedTypesAsQuotable(t *testing.T) {
	lists, err := counted()
	require.NoError(t, err)
	var n int
	for _, l := range lists {
		for _, r := range l.APIResources {
			n++
			assert.True(t, r.Namespaced)
			assert.Subset(t, r.Verbs, []string{"create", "list", "watch", "delete"}, "what the quota controller monitors")
		}
	}
	var namespaced int
	for _, t := range federatedtypes.All {
		if t.Namespaced {
			namespaced++
		}
	}
	assert.Equal(t, namespaced, n)
}

func TestOnlyAServicesUsageChangesWithAnUpdate(t *testing.T) {
	svc := func(typ string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Service",
			"spec": map[string]any{"type": typ, "ports": []any{map[string]any{"port": int64(80)}}}}}
	}
	services := schema.GroupVersionResource{Version: "v1", Resource: "services"}
	assert.True(t, usageChanged(services, svc("ClusterIP"), svc("LoadBalancer")))
	assert.False(t, usageChanged(services, svc("ClusterIP"), svc("ClusterIP")))
	assert.False(t, usageChanged(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, configMap("a", "b"), configMap("a", "b")))
}
