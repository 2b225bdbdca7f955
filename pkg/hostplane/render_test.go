package hostplane

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// chartDir is the chart in the source tree (the one kubefed embeds).
const chartDir = "../../deploy/charts/federation"

func render(t *testing.T, o Options, addrs Addresses) ([]*unstructured.Unstructured, Layout) {
	t.Helper()
	c, err := LoadChart(os.DirFS(chartDir))
	require.NoError(t, err)
	values, err := c.Coalesce(o.Values(addrs))
	require.NoError(t, err)
	objs, err := c.Render(o.Name, o.Namespace, values, nil)
	require.NoError(t, err)
	return objs, NewLayout(o.Name, o.Namespace, values)
}

func find(objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

// commandOf is the joined command of the first container of a workload.
func commandOf(t *testing.T, obj *unstructured.Unstructured) string {
	t.Helper()
	containers, _, err := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
	require.NoError(t, err)
	require.NotEmpty(t, containers)
	c := containers[0].(map[string]any)
	var parts []string
	for _, k := range []string{"command", "args"} {
		list, _, _ := unstructured.NestedStringSlice(c, k)
		parts = append(parts, list...)
	}
	return strings.Join(parts, " ")
}

func TestRenderWithKubefedsCredentials(t *testing.T) {
	o := validOptions()
	o.APIServerArgs = []string{"--v=4"}
	o.ControllerManagerArgs = []string{"--v=3"}
	o.DNSZone = "example.com."
	objs, layout := render(t, o, Addresses{APIServer: "127.1.1.5:443", DNS: "127.1.1.6:53"})

	assert.Nil(t, find(objs, "Secret", "fed-credentials"), "kubefed makes the credentials Secret itself")
	svc := find(objs, "Service", layout.APIServerService())
	require.NotNil(t, svc)
	typ, _, _ := unstructured.NestedString(svc.Object, "spec", "type")
	assert.Equal(t, "LoadBalancer", typ)
	dns := find(objs, "Service", layout.DNSService())
	require.NotNil(t, dns)
	typ, _, _ = unstructured.NestedString(dns.Object, "spec", "type")
	assert.Equal(t, "LoadBalancer", typ)

	apiserver := find(objs, "Deployment", "fed-apiserver")
	require.NotNil(t, apiserver)
	assert.Contains(t, commandOf(t, apiserver), "--v=4")
	cm := find(objs, "Deployment", "fed-controller-manager")
	require.NotNil(t, cm)
	assert.Contains(t, commandOf(t, cm), "--v=3")
	assert.Contains(t, commandOf(t, cm), "--federation-name=fed")
	require.NotNil(t, find(objs, "StatefulSet", "fed-etcd"))
	for _, obj := range objs {
		assert.Equal(t, "fed", obj.GetLabels()[LabelInstance], "%s %s", obj.GetKind(), obj.GetName())
		assert.Equal(t, FieldManager, obj.GetLabels()[LabelManagedBy], "%s %s", obj.GetKind(), obj.GetName())
		if obj.GetKind() == "Deployment" || obj.GetKind() == "StatefulSet" {
			containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
			for _, c := range containers {
				assert.Equal(t, "localhost/federation:v1.2.3", c.(map[string]any)["image"], obj.GetName())
			}
		}
	}
	assert.Contains(t, mountedSecrets(apiserver), "fed-credentials")
	assert.Contains(t, mountedSecrets(cm), "fed-credentials")
}

// mountedSecrets are the Secrets a workload's pods mount.
func mountedSecrets(obj *unstructured.Unstructured) []string {
	volumes, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "volumes")
	var names []string
	for _, v := range volumes {
		if name, ok, _ := unstructured.NestedString(v.(map[string]any), "secret", "secretName"); ok {
			names = append(names, name)
		}
	}
	return names
}
