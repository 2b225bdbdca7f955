package federationquota

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/kubernetes/pkg/apis/apps"
	api "k8s.io/kubernetes/pkg/apis/core"
)

func list(kv ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return l
}

// newPlugin is the plugin as the apiserver initializes it (the generic
// initializer of AdmissionOptions.ApplyTo), over a fake client holding quota.
func newPlugin(t *testing.T, quota *corev1.ResourceQuota) (*Plugin, *fake.Clientset) {
	plugins := admission.NewPlugins()
	Register(plugins)
	client := fake.NewClientset(quota)
	factory := informers.NewSharedInformerFactory(client, 0)
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	init := initializer.New(client, nil, factory, nil, nil, nil, stop, nil)
	made, err := plugins.InitPlugin(PluginName, nil, init)
	require.NoError(t, err)
	factory.Start(stop)
	cache.WaitForCacheSync(stop, factory.Core().V1().ResourceQuotas().Informer().HasSynced)
	return made.(*Plugin), client
}

func TestQuotaIsEnforcedForTheFederationsObjectCounts(t *testing.T) {
	configMap := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	for _, tc := range []struct {
		name        string
		hard, used  corev1.ResourceList
		resource    schema.GroupVersionResource
		subresource string
		obj         runtime.Object
		refused     string // "" when admitted
		charged     corev1.ResourceList
	}{{
		name: "the sixth ConfigMap", hard: list("count/configmaps", "5"), used: list("count/configmaps", "5"),
		resource: configMap, obj: &api.ConfigMap{}, refused: "exceeded quota: q, requested: count/configmaps=1, used: count/configmaps=5, limited: count/configmaps=5",
	}, {
		name: "the legacy name", hard: list("configmaps", "5", "requests.cpu", "1"), used: list("configmaps", "5"),
		resource: configMap, obj: &api.ConfigMap{}, refused: "exceeded quota: q",
	}, {
		name: "within the quota, charged; the members' resources kept", hard: list("count/configmaps", "5", "requests.cpu", "1"),
		used: list("count/configmaps", "4", "requests.cpu", "900m"), resource: configMap, obj: &api.ConfigMap{},
		charged: list("count/configmaps", "5", "requests.cpu", "900m"),
	}, {
		name: "a Deployment through extensions/v1beta1 counts as deployments.apps", hard: list("count/deployments.apps", "1"),
		used: list("count/deployments.apps", "1"), resource: schema.GroupVersionResource{Group: "extensions", Version: "v1beta1", Resource: "deployments"},
		obj: &apps.Deployment{}, refused: "exceeded quota: q",
	}, {
		name: "a load balancer", hard: list("services.loadbalancers", "0"), used: list("services.loadbalancers", "0"),
		resource: schema.GroupVersionResource{Version: "v1", Resource: "services"},
		obj:      &api.Service{Spec: api.ServiceSpec{Type: api.ServiceTypeLoadBalancer, Ports: []api.ServicePort{{Port: 80}}}},
		refused:  "exceeded quota: q, requested: services.loadbalancers=1",
	}, {
		name: "a count nobody has counted yet", hard: list("count/secrets", "5"),
		resource: schema.GroupVersionResource{Version: "v1", Resource: "secrets"}, obj: &api.Secret{}, refused: "status unknown for quota: q",
	}, {
		name: "a resource the federation does not count is not charged", hard: list("count/events", "0"),
		resource: schema.GroupVersionResource{Version: "v1", Resource: "events"}, obj: &api.Event{},
	}, {
		name: "the members' resources are not enforced here", hard: list("pods", "0", "requests.cpu", "0"), used: list("pods", "3", "requests.cpu", "0"),
		resource: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, obj: &api.Pod{},
	}, {
		name: "a subresource is not charged", hard: list("count/serviceaccounts", "0"), used: list("count/serviceaccounts", "0"),
		resource: schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}, subresource: "token", obj: &api.ServiceAccount{},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			quota := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q", Namespace: "team", ResourceVersion: "1"},
				Spec: corev1.ResourceQuotaSpec{Hard: tc.hard}, Status: corev1.ResourceQuotaStatus{Hard: tc.hard, Used: tc.used}}
			p, client := newPlugin(t, quota)
			attrs := admission.NewAttributesRecord(tc.obj, nil, schema.GroupVersionKind{}, "team", "x", tc.resource, tc.subresource,
				admission.Create, &metav1.CreateOptions{}, false, &user.DefaultInfo{Name: "alice"})
			err := p.Validate(context.Background(), attrs, nil)
			if tc.refused != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.refused)
				assert.True(t, apierrors.IsForbidden(err), "403: %v", err)
				return
			}
			require.NoError(t, err)
			got, err := client.CoreV1().ResourceQuotas("team").Get(context.Background(), "q", metav1.GetOptions{})
			require.NoError(t, err)
			want := tc.used
			if tc.charged != nil {
				want = tc.charged
			}
			assert.Equal(t, len(want), len(got.Status.Used), "%v", got.Status.Used)
			for name, q := range want {
				assert.Zero(t, q.Cmp(got.Status.Used[name]), "%s: %v", name, got.Status.Used)
			}
		})
	}
}
