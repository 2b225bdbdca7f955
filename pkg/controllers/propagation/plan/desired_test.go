package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/federatedtypes"
	"github.com/federation-v1/federation/pkg/planner/replicaplan"
)

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
  labels:
    federation.kubernetes.io/federation-name: fed
    pod-security.kubernetes.io/enforce: baseline
    pod-security.kubernetes.io/warn: baseline
    pod-security.kubernetes.io/audit: baseline`,
		},
		{
			name: "namespace: its own Pod Security labels are kept", adapter: "namespaces",
			fed: `apiVersion: v1
kind: Namespace
metadata: {name: ns, labels: {pod-security.kubernetes.io/enforce: privileged}}`,
			want: `apiVersion: v1
kind: Namespace
metadata:
  name: ns
  labels: {federation.kubernetes.io/federation-name: fed, pod-security.kubernetes.io/enforce: privileged}`,
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
  selector: {app: a, federation.kubernetes.io/federation-name: fed}`,
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
			got, hash, err := Desired(federatedtypes.ByName(tt.adapter), fed, "fed", "")
			require.NoError(t, err)
			assert.Equal(t, before, fed, "the federated object is not modified")
			assert.Equal(t, hash, got.GetAnnotations()[federationv1beta1.AppliedHashAnnotation])
			annotations := got.GetAnnotations()
			delete(annotations, federationv1beta1.AppliedHashAnnotation)
			if len(annotations) == 0 {
				annotations = nil
			}
			got.SetAnnotations(annotations)
			assert.Equal(t, parse(t, tt.want).Object, got.Object)
			assert.Equal(t, "fed", got.GetLabels()[federationv1beta1.FederationLabel])
		})
	}
}

func TestDesiredHash(t *testing.T) {
	base := `apiVersion: v1
kind: ConfigMap
metadata: {name: a, namespace: ns, resourceVersion: "1", labels: {app: a}}
data: {k: v}`
	_, h0, err := Desired(federatedtypes.ByName("configmaps"), parse(t, base), "fed", "")
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
			_, h, err := Desired(federatedtypes.ByName("configmaps"), parse(t, tt.manifest), "fed", "")
			require.NoError(t, err)
			assert.Equal(t, tt.same, h == h0)
		})
	}
	_, other, err := Desired(federatedtypes.ByName("configmaps"), parse(t, base), "other-federation", "")
	require.NoError(t, err)
	assert.NotEqual(t, h0, other, "the federation's label is part of what is applied")
}

func TestDesiredForACluster(t *testing.T) {
	fed := parse(t, "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: ns, annotations: {note: x}}\nspec: {replicas: 9, template: {}}\n")
	desired, _, err := Desired(federatedtypes.ByName("deployments"), fed, "fed", "")
	require.NoError(t, err)
	shares := replicaplan.Plan{"replicas": {"c1": 5, "c2": 4}}

	d1, h1, err := DesiredFor(desired, shares, "c1", nil)
	require.NoError(t, err)
	d2, h2, err := DesiredFor(desired, shares, "c2", nil)
	require.NoError(t, err)
	d3, h3, err := DesiredFor(desired, shares, "c3", nil)
	require.NoError(t, err)
	for d, want := range map[*unstructured.Unstructured]int64{d1: 5, d2: 4, d3: 0} {
		n, _, _ := unstructured.NestedInt64(d.Object, "spec", "replicas")
		assert.Equal(t, want, n)
	}
	assert.NotEqual(t, h1, h2, "the hash covers the cluster's count")
	assert.NotEqual(t, h2, h3)
	assert.Equal(t, h1, d1.GetAnnotations()[federationv1beta1.AppliedHashAnnotation])
	assert.Equal(t, "x", d1.GetAnnotations()["note"])
	label, _, _ := unstructured.NestedString(d1.Object, "spec", "template", "metadata", "labels", "federation.kubernetes.io/federation-name")
	assert.Equal(t, "fed", label, "pods carry the federation's label")
	again, hAgain, err := DesiredFor(desired, shares, "c1", nil)
	require.NoError(t, err)
	assert.Equal(t, h1, hAgain)
	assert.Equal(t, d1, again)

	seven := int64(7)
	owned, _, err := DesiredFor(desired, shares, "c1", &seven)
	require.NoError(t, err)
	n, _, _ := unstructured.NestedInt64(owned.Object, "spec", "replicas")
	assert.Equal(t, int64(7), n, "the member's HPA owns the count: the federation follows it")
	assert.Equal(t, map[string]bool{"c1": true, "c2": true}, replicaplan.HPAClusters(map[string]string{federationv1beta1.HPATargetClustersAnnotation: `{"Names":["c1","c2"]}`}))
}

// kubectl apply records the whole object, override rules included, in an
// annotation that travels: the rules are taken out of that record too, so
// that changing them changes no copy they leave as it was.
func TestTheLastAppliedRecordTravelsWithoutTheRules(t *testing.T) {
	withRules := func(rules string) *unstructured.Unstructured {
		record := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"annotations":{"federation.kubernetes.io/overrides":` +
			rules + `,"note":"x"},"name":"a","namespace":"ns"},"data":{"k":"v"}}` + "\n"
		fed := configMap("a")
		fed.SetAnnotations(map[string]string{
			federationv1beta1.OverridesAnnotation: rules,
			"note":                                "x",
			"kubectl.kubernetes.io/last-applied-configuration": record,
		})
		return fed
	}
	one, hashOne, err := Desired(federatedtypes.ByName("configmaps"), withRules(`"[{\"clusters\":[\"c1\"],\"labels\":{\"a\":\"1\"}}]"`), "fed", "fed-uid")
	require.NoError(t, err)
	_, hashTwo, err := Desired(federatedtypes.ByName("configmaps"), withRules(`"[{\"clusters\":[\"c1\"],\"labels\":{\"a\":\"2\"}}]"`), "fed", "fed-uid")
	require.NoError(t, err)
	assert.Equal(t, hashOne, hashTwo, "the rules changed, nothing else")
	assert.JSONEq(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"annotations":{"note":"x"},"name":"a","namespace":"ns"},"data":{"k":"v"}}`,
		one.GetAnnotations()["kubectl.kubernetes.io/last-applied-configuration"])

	// A record that is no JSON object travels as it is.
	odd := configMap("a")
	odd.SetAnnotations(map[string]string{"kubectl.kubernetes.io/last-applied-configuration": "not json"})
	d, _, err := Desired(federatedtypes.ByName("configmaps"), odd, "fed", "fed-uid")
	require.NoError(t, err)
	assert.Equal(t, "not json", d.GetAnnotations()["kubectl.kubernetes.io/last-applied-configuration"])
}

// configMap is a federated ConfigMap ns/name.
func configMap(name string) *unstructured.Unstructured {
	o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]any{"k": "v"}}}
	o.SetName(name)
	o.SetNamespace("ns")
	return o
}
