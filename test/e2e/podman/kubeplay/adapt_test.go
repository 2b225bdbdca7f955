package kubeplay

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// rendered is what a chart renders, in brief: a Secret, a ConfigMap, a
// Service, an etcd StatefulSet with a claim template and a Deployment.
const rendered = `# Source: federation/templates/credentials.yaml
apiVersion: v1
kind: Secret
metadata: {name: fed-credentials, namespace: federation-system}
data:
  ca.crt: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==
stringData:
  note: plain
---
apiVersion: v1
kind: ConfigMap
metadata: {name: fed-dns, namespace: federation-system}
data: {Corefile: ". {}"}
---
# Source: federation/templates/service.yaml
apiVersion: v1
kind: Service
metadata: {name: fed-apiserver, namespace: federation-system}
spec: {ports: [{port: 443}]}
---
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: fed-etcd, namespace: federation-system}
spec:
  replicas: 1
  serviceName: fed-etcd
  selector: {matchLabels: {app: etcd}}
  template:
    metadata: {labels: {app: etcd}}
    spec:
      hostNetwork: true
      containers:
      - name: etcd
        image: localhost/federation:dev
        command: [/usr/local/bin/etcd, --name=$(POD_NAME)]
        env:
        - name: POD_NAME
          valueFrom: {fieldRef: {fieldPath: metadata.name}}
        - name: POD_IP
          valueFrom: {fieldRef: {fieldPath: status.podIP}}
        ports: [{name: client, containerPort: 2379}]
        livenessProbe: {httpGet: {path: /health, port: 2381}}
        volumeMounts: [{name: data, mountPath: /var/lib/etcd}, {name: pki, mountPath: /etc/federation/pki}]
      volumes:
      - name: pki
        secret: {secretName: fed-credentials}
  volumeClaimTemplates:
  - metadata: {name: data}
    spec:
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 10Gi}}
      storageClassName: fast
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: fed-apiserver, namespace: federation-system}
spec:
  replicas: 1
  selector: {matchLabels: {app: apiserver}}
  template:
    metadata: {labels: {app: apiserver}, annotations: {checksum: abc, checksum/config: 34c49d31e4cde5da04dba0d715d0bee16b83e07fb96c8ca6e70e65c66694cc19}}
    spec:
      hostNetwork: true
      imagePullSecrets: [{name: registry}]
      containers:
      - name: apiserver
        image: localhost/federation:dev
        ports: [{name: https, containerPort: 8443}]
        readinessProbe: {httpGet: {path: /readyz, port: https, scheme: HTTPS}}
        volumeMounts: [{name: pki, mountPath: /etc/federation/pki}, {name: dns, mountPath: /etc/federation/dns}]
      volumes:
      - name: pki
        secret: {secretName: fed-credentials, items: [{key: ca.crt, path: ca.crt}]}
      - name: dns
        configMap: {name: fed-dns}
`

func adaptRendered(t *testing.T) *Plan {
	t.Helper()
	objs, err := Decode([]byte(rendered))
	require.NoError(t, err)
	require.Len(t, objs, 5, "the empty document is skipped")
	plan, err := Adapt(objs, Options{Prefix: "run1-"})
	require.NoError(t, err)
	return plan
}

func TestAdaptOrdersWhatPodmanReadsBeforeThePods(t *testing.T) {
	plan := adaptRendered(t)
	var kinds []string
	for _, obj := range plan.Objects {
		kinds = append(kinds, obj.GetObjectKind().GroupVersionKind().Kind+"/"+name(obj))
	}
	assert.Equal(t, []string{
		"ConfigMap/run1-fed-credentials", "ConfigMap/run1-fed-dns",
		"PersistentVolumeClaim/run1-data-fed-etcd-0",
		"Pod/run1-fed-etcd-0", "Pod/run1-fed-apiserver-0",
	}, kinds)
	assert.Equal(t, []string{"run1-fed-etcd-0", "run1-fed-apiserver-0"}, plan.Pods)
	assert.Equal(t, []string{"Service/fed-apiserver"}, plan.Skipped)
}

func TestAdaptCarriesSecretsAsConfigMapsOfTheirBytes(t *testing.T) {
	plan := adaptRendered(t)
	cm := plan.Objects[0].(*corev1.ConfigMap)
	assert.Equal(t, map[string][]byte{"ca.crt": []byte("-----BEGIN CERTIFICATE-----\n"), "note": []byte("plain")}, cm.BinaryData)
	assert.Empty(t, cm.Data)

	api := plan.Objects[4].(*corev1.Pod)
	require.Len(t, api.Spec.Volumes, 2)
	pki := api.Spec.Volumes[0]
	assert.Nil(t, pki.Secret)
	require.NotNil(t, pki.ConfigMap)
	assert.Equal(t, "run1-fed-credentials", pki.ConfigMap.Name)
	assert.Equal(t, []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}, pki.ConfigMap.Items)
	assert.Equal(t, "run1-fed-dns", api.Spec.Volumes[1].ConfigMap.Name)
}

func TestAdaptStatefulSetPodsGetTheirClaimsAndNames(t *testing.T) {
	plan := adaptRendered(t)
	claim := plan.Objects[2].(*corev1.PersistentVolumeClaim)
	assert.Empty(t, claim.Spec.StorageClassName, "podman has no storage classes")
	etcd := plan.Objects[3].(*corev1.Pod)
	assert.Contains(t, etcd.Spec.Volumes, corev1.Volume{Name: "data", VolumeSource: corev1.VolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "run1-data-fed-etcd-0"},
	}})
	c := etcd.Spec.Containers[0]
	assert.Equal(t, []corev1.EnvVar{{Name: "POD_NAME", Value: "fed-etcd-0"}, {Name: "POD_IP", Value: "127.0.0.1"}}, c.Env,
		"the name a cluster would give, not podman's")
	assert.Nil(t, c.Ports)
	assert.Nil(t, c.LivenessProbe)
	assert.Equal(t, map[string]string{"app": "etcd"}, etcd.Labels)
}

func TestAdaptDeploymentPods(t *testing.T) {
	plan := adaptRendered(t)
	api := plan.Objects[4].(*corev1.Pod)
	assert.Nil(t, api.Spec.ImagePullSecrets)
	assert.Nil(t, api.Spec.Containers[0].ReadinessProbe)
	assert.Equal(t, map[string]string{"checksum": "abc"}, api.Annotations, "podman refuses the longer value")
	assert.Empty(t, api.Namespace)
}

func TestAdaptRoundTripsThroughYAML(t *testing.T) {
	plan := adaptRendered(t)
	doc, err := plan.YAML()
	require.NoError(t, err)
	objs, err := Decode(doc)
	require.NoError(t, err)
	require.Len(t, objs, len(plan.Objects))
	for i := range objs {
		assert.Equal(t, name(plan.Objects[i]), name(objs[i]))
	}
	assert.Equal(t, []byte("plain"), objs[0].(*corev1.ConfigMap).BinaryData["note"])
}

func TestAdaptRefuses(t *testing.T) {
	pod := func(spec string) string {
		return "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n" + spec
	}
	for _, tc := range []struct {
		name, manifests, err string
		prefix               string
	}{
		{name: "no prefix", manifests: pod("  hostNetwork: true\n  containers: [{name: c}]\n"), err: "Options.Prefix is empty"},
		{name: "a pod network", prefix: "x-", manifests: pod("  containers: [{name: c}]\n"), err: "pod p: spec.hostNetwork is false"},
		{name: "an item in a folder", prefix: "x-", manifests: pod("  hostNetwork: true\n  containers: [{name: c}]\n  volumes: [{name: v, secret: {secretName: s, items: [{key: k, path: a/k}]}}]\n"),
			err: `pod p: volume v: item k has path "a/k"`},
		{name: "a hostPath volume", prefix: "x-", manifests: pod("  hostNetwork: true\n  containers: [{name: c}]\n  volumes: [{name: v, hostPath: {path: /}}]\n"),
			err: "pod p: volume v: only secret"},
		{name: "a resource field", prefix: "x-", manifests: pod("  hostNetwork: true\n  containers: [{name: c, env: [{name: E, valueFrom: {resourceFieldRef: {resource: limits.cpu}}}]}]\n"),
			err: "pod p: container c: env E: only fieldRef"},
		{name: "a Secret and a ConfigMap of one name", prefix: "x-",
			manifests: "apiVersion: v1\nkind: Secret\nmetadata: {name: a}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
			err:       "Secret/a and ConfigMap/a would both be podman's ConfigMap x-a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := Decode([]byte(tc.manifests))
			require.NoError(t, err)
			_, err = Adapt(objs, Options{Prefix: tc.prefix})
			require.ErrorContains(t, err, tc.err)
		})
	}
}

// TestAdaptGivesServiceAccountTokens: a pod that does not opt out gets
// its service account's token, the CA and its namespace where client-go's
// in-cluster configuration reads them, and the API server's address.
func TestAdaptGivesServiceAccountTokens(t *testing.T) {
	objs, err := Decode([]byte(`apiVersion: apps/v1
kind: Deployment
metadata: {name: agent, namespace: federation-system}
spec:
  replicas: 1
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      hostNetwork: true
      serviceAccountName: federation-agent
      initContainers: [{name: init}]
      containers:
      - name: agent
        env: [{name: A, value: b}]
        volumeMounts: [{name: member, mountPath: /etc/member}]
      - name: own
        volumeMounts: [{name: member, mountPath: /var/run/secrets/kubernetes.io/serviceaccount}]
      volumes: [{name: member, secret: {secretName: member-token}}]
---
apiVersion: v1
kind: Pod
metadata: {name: opted-out, namespace: federation-system}
spec:
  hostNetwork: true
  automountServiceAccountToken: false
  containers: [{name: c}]
`))
	require.NoError(t, err)
	var asked []string
	sa := &ServiceAccounts{
		Token: func(namespace, name string) ([]byte, error) {
			asked = append(asked, namespace+"/"+name)
			return []byte("token-of-" + name), nil
		},
		CA: []byte("CA PEM"), Host: "127.0.0.1", Port: 6443,
	}
	plan, err := Adapt(objs, Options{Prefix: "run1-", ServiceAccounts: sa})
	require.NoError(t, err)
	assert.Equal(t, []string{"federation-system/federation-agent"}, asked, "only the pod that does not opt out")
	var kinds []string
	for _, obj := range plan.Objects {
		kinds = append(kinds, obj.GetObjectKind().GroupVersionKind().Kind+"/"+name(obj))
	}
	assert.Equal(t, []string{"ConfigMap/run1-kube-api-access-agent-0", "Pod/run1-agent-0", "Pod/run1-opted-out"}, kinds)
	assert.Equal(t, map[string][]byte{"token": []byte("token-of-federation-agent"), "ca.crt": []byte("CA PEM"), "namespace": []byte("federation-system")},
		plan.Objects[0].(*corev1.ConfigMap).BinaryData)

	pod := plan.Objects[1].(*corev1.Pod)
	assert.Contains(t, pod.Spec.Volumes, corev1.Volume{Name: "kube-api-access", VolumeSource: corev1.VolumeSource{
		ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "run1-kube-api-access-agent-0"}},
	}})
	mount := corev1.VolumeMount{Name: "kube-api-access", MountPath: ServiceAccountDir, ReadOnly: true}
	env := []corev1.EnvVar{{Name: "KUBERNETES_SERVICE_HOST", Value: "127.0.0.1"}, {Name: "KUBERNETES_SERVICE_PORT", Value: "6443"}}
	assert.Equal(t, []corev1.VolumeMount{mount}, pod.Spec.InitContainers[0].VolumeMounts)
	assert.Equal(t, env, pod.Spec.InitContainers[0].Env)
	agent := pod.Spec.Containers[0]
	assert.Equal(t, []corev1.VolumeMount{{Name: "member", MountPath: "/etc/member"}, mount}, agent.VolumeMounts)
	assert.Equal(t, append([]corev1.EnvVar{{Name: "A", Value: "b"}}, env...), agent.Env)
	assert.Equal(t, []corev1.VolumeMount{{Name: "member", MountPath: ServiceAccountDir}}, pod.Spec.Containers[1].VolumeMounts,
		"a container with its own mount there keeps it")

	optedOut := plan.Objects[2].(*corev1.Pod)
	assert.Empty(t, optedOut.Spec.Volumes)
	assert.Empty(t, optedOut.Spec.Containers[0].Env)

	// Without ServiceAccounts, no pod gets a token.
	plan, err = Adapt(objs, Options{Prefix: "run1-"})
	require.NoError(t, err)
	assert.Len(t, plan.Objects, 2)
	assert.Len(t, plan.Objects[0].(*corev1.Pod).Spec.Volumes, 1)

	sa.Token = func(string, string) ([]byte, error) { return nil, errors.New("forbidden") }
	_, err = Adapt(objs, Options{Prefix: "run1-", ServiceAccounts: sa})
	assert.ErrorContains(t, err, "pod agent-0: the token of service account federation-system/federation-agent: forbidden")
}

func TestDecodeKeepsUnknownKinds(t *testing.T) {
	objs, err := Decode([]byte("apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata: {name: fed}\n"))
	require.NoError(t, err)
	plan, err := Adapt(objs, Options{Prefix: "x-"})
	require.NoError(t, err)
	assert.Equal(t, []string{"ServiceMonitor/fed"}, plan.Skipped)
}

func name(obj runtime.Object) string {
	return obj.(interface{ GetName() string }).GetName()
}
