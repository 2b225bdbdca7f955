package propagation

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/kubernetes/pkg/apis/apps"
	"k8s.io/kubernetes/pkg/apis/autoscaling"
	"k8s.io/kubernetes/pkg/apis/batch"
	api "k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/pkg/apis/networking"
	"k8s.io/kubernetes/pkg/apis/policy"
	"k8s.io/kubernetes/pkg/registry/apps/daemonset"
	"k8s.io/kubernetes/pkg/registry/apps/deployment"
	"k8s.io/kubernetes/pkg/registry/apps/replicaset"
	"k8s.io/kubernetes/pkg/registry/apps/statefulset"
	"k8s.io/kubernetes/pkg/registry/autoscaling/horizontalpodautoscaler"
	"k8s.io/kubernetes/pkg/registry/batch/cronjob"
	"k8s.io/kubernetes/pkg/registry/batch/job"
	"k8s.io/kubernetes/pkg/registry/core/persistentvolumeclaim"
	"k8s.io/kubernetes/pkg/registry/core/resourcequota"
	"k8s.io/kubernetes/pkg/registry/core/service"
	ingressregistry "k8s.io/kubernetes/pkg/registry/networking/ingress"
	"k8s.io/kubernetes/pkg/registry/policy/poddisruptionbudget"
	"k8s.io/utils/ptr"

	"github.com/federation-v1/federation/pkg/federatedtypes"
)

// TestShapedTypesAreThoseWithoutGeneration checks shapedTypes against
// what the members' kube-apiservers do: of the types read whole from the
// members, exactly those whose Kubernetes strategy sets no generation on
// create are remembered by their shape.
func TestShapedTypesAreThoseWithoutGeneration(t *testing.T) {
	kubernetes := map[string]struct {
		strategy rest.RESTCreateStrategy
		obj      runtime.Object
	}{
		"services":                 {service.Strategy, &api.Service{}},
		"deployments":              {deployment.Strategy, &apps.Deployment{}},
		"replicasets":              {replicaset.Strategy, &apps.ReplicaSet{}},
		"daemonsets":               {daemonset.Strategy, &apps.DaemonSet{}},
		"ingresses":                {ingressregistry.Strategy, &networking.Ingress{}},
		"jobs":                     {job.Strategy, &batch.Job{Spec: batch.JobSpec{ManualSelector: ptr.To(true)}}},
		"horizontalpodautoscalers": {horizontalpodautoscaler.Strategy, &autoscaling.HorizontalPodAutoscaler{}},
		"statefulsets":             {statefulset.Strategy, &apps.StatefulSet{}},
		"cronjobs":                 {cronjob.Strategy, &batch.CronJob{}},
		"poddisruptionbudgets":     {poddisruptionbudget.Strategy, &policy.PodDisruptionBudget{}},
		"persistentvolumeclaims":   {persistentvolumeclaim.Strategy, &api.PersistentVolumeClaim{}},
		"resourcequotas":           {resourcequota.Strategy, &api.ResourceQuota{}},
	}
	for _, typ := range federatedtypes.All {
		if typ.MetadataOnly() {
			assert.False(t, typ.Shaped, "%s: read as metadata only, it has no shape", typ.Name)
			continue
		}
		k, ok := kubernetes[typ.Name]
		if !assert.True(t, ok, "%s: add its Kubernetes strategy here", typ.Name) {
			continue
		}
		k.strategy.PrepareForCreate(context.Background(), k.obj)
		m, err := meta.Accessor(k.obj)
		require.NoError(t, err)
		assert.Equal(t, m.GetGeneration() == 0, typ.Shaped, "%s: generation %d on create", typ.Name, m.GetGeneration())
	}
}
