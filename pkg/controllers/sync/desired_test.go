package sync

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/federation-v1/federation/pkg/membercluster"
)

func adapter(name string) *Adapter {
	for _, a := range Adapters {
		if a.Name == name {
			return a
		}
	}
	panic(name)
}

func parse(t *testing.T, manifest string) *unstructured.Unstructured {
	t.Helper()
	obj := map[string]any{}
	require.NoError(t, yaml.Unmarshal([]byte(manifest), &obj))
	return &unstructured.Unstructured{Object: obj}
}

func TestDesiredCarriesOnlyWhatTravels(t *testing.T) {
	for _, tt := range []struct {
		name, adapter, fed, want string
	}{
		{
			name: "configmap", adapter: "configmaps",
			fed: `apiVersion: v1
kind: ConfigMap
metadata:
  name: a
  namespace: ns
  uid: 123
  resourceVersion: "7"
  generation: 3
  creationTimestamp: "2026-01-01T00:00:00Z"
  finalizers: [federation.kubernetes.io/delete-from-underlying-clusters]
  managedFields: [{manager: kubectl}]
  labels: {app: a}
  annotations: {note: x, federation.kubernetes.io/service-ingresses: "{}"}
data: {k: v}`,
			want: `apiVersion: v1
kind: ConfigMap
metadata:
  name: a
  namespace: ns
  labels: {app: a, federation.kubernetes.io/federation-name: fed}
  annotations: {note: x}
data: {k: v}`,
		},
		{
			name: "namespace: metadata only", adapter: "namespaces",
			fed: `apiVersion: v1
kind: Namespace
metadata: {name: ns}
spec: {finalizers: [kubernetes]}
status: {phase: Active}`,
			want: `apiVersion: v1
kind: Namespace
metadata:
  name: ns
  labels: {federation.kubernetes.io/federation-name: fed}`,
		},
		{
			name: "service: no cluster IPs, node ports or status", adapter: "services",
			fed: `apiVersion: v1
kind: Service
metadata: {name: s, namespace: ns}
spec:
  type: LoadBalancer
  clusterIP: 10.0.0.1
  clusterIPs: [10.0.0.1]
  ipFamilies: [IPv4]
  ipFamilyPolicy: SingleStack
  healthCheckNodePort: 30001
  ports: [{port: 80, nodePort: 30080, protocol: TCP}]
  selector: {app: a}
status: {loadBalancer: {ingress: [{ip: 1.2.3.4}]}}`,
			want: `apiVersion: v1
kind: Service
metadata:
  name: s
  namespace: ns
  labels: {federation.kubernetes.io/federation-name: fed}
spec:
  type: LoadBalancer
  ports: [{port: 80, protocol: TCP}]
  selector: {app: a}`,
		},
		{
			name: "job: the generated selector stays behind", adapter: "jobs",
			fed: `apiVersion: batch/v1
kind: Job
metadata: {name: j, namespace: ns}
spec:
  selector: {matchLabels: {batch.kubernetes.io/controller-uid: u1}}
  template:
    metadata:
      labels: {app: j, batch.kubernetes.io/controller-uid: u1, batch.kubernetes.io/job-name: j, controller-uid: u1, job-name: j}
    spec: {restartPolicy: Never}
status: {active: 1}`,
			want: `apiVersion: batch/v1
kind: Job
metadata:
  name: j
  namespace: ns
  labels: {federation.kubernetes.io/federation-name: fed}
spec:
  template:
    metadata:
      labels: {app: j, federation.kubernetes.io/federation-name: fed}
    spec: {restartPolicy: Never}`,
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fed := parse(t, tt.fed)
			before := fed.DeepCopy()
			got, hash, err := Desired(adapter(tt.adapter), fed, "fed")
			require.NoError(t, err)
			assert.Equal(t, before, fed, "the federated object is not modified")
			assert.Equal(t, hash, got.GetAnnotations()[HashAnnotation])
			annotations := got.GetAnnotations()
			delete(annotations, HashAnnotation)
			if len(annotations) == 0 {
				annotations = nil
			}
			got.SetAnnotations(annotations)
			assert.Equal(t, parse(t, tt.want).Object, got.Object)
			assert.Equal(t, "fed", got.GetLabels()[membercluster.FederationLabel])
		})
	}
}

func TestDesiredHash(t *testing.T) {
	base := `apiVersion: v1
kind: ConfigMap
metadata: {name: a, namespace: ns, resourceVersion: "1", labels: {app: a}}
data: {k: v}`
	_, h0, err := Desired(adapter("configmaps"), parse(t, base), "fed")
	require.NoError(t, err)
	for _, tt := range []struct {
		name, manifest string
		same           bool
	}{
		{"same object", base, true},
		{"only resourceVersion and status differ", `apiVersion: v1
kind: ConfigMap
metadata: {name: a, namespace: ns, resourceVersion: "9", labels: {app: a}}
data: {k: v}`, true},
		{"service-ingresses annotation does not count", `apiVersion: v1
kind: ConfigMap
metadata: {name: a, namespace: ns, labels: {app: a}, annotations: {federation.kubernetes.io/service-ingresses: x}}
data: {k: v}`, true},
		{"data changed", `apiVersion: v1
kind: ConfigMap
metadata: {name: a, namespace: ns, labels: {app: a}}
data: {k: w}`, false},
		{"label changed", `apiVersion: v1
kind: ConfigMap
metadata: {name: a, namespace: ns, labels: {app: b}}
data: {k: v}`, false},
		{"annotation added", `apiVersion: v1
kind: ConfigMap
metadata: {name: a, namespace: ns, labels: {app: a}, annotations: {x: "z"}}
data: {k: v}`, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, h, err := Desired(adapter("configmaps"), parse(t, tt.manifest), "fed")
			require.NoError(t, err)
			assert.Equal(t, tt.same, h == h0)
		})
	}
	_, other, err := Desired(adapter("configmaps"), parse(t, base), "other-federation")
	require.NoError(t, err)
	assert.NotEqual(t, h0, other, "the federation's label is part of what is applied")
}
