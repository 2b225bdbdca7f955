package overrides

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// deployment is a copy as the controller builds it.
func deployment() map[string]any {
	return map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{
			"name": "web", "namespace": "ns",
			"labels":      map[string]any{"app": "web", "federation.kubernetes.io/federation-name": "fed"},
			"annotations": map[string]any{"federation.kubernetes.io/object-uid": "u1"},
		},
		"spec": map[string]any{
			"replicas": int64(3),
			"template": map[string]any{"spec": map[string]any{
				"initContainers": []any{map[string]any{"name": "init", "image": "busybox"}},
				"containers": []any{
					map[string]any{"name": "app", "image": "docker.io/team/web:1.0", "env": []any{map[string]any{"name": "A", "value": "0"}}},
					map[string]any{"name": "sidecar", "image": "localhost:5000/proxy@sha256:" + hex64, "args": []any{"--v=1"}},
				},
			}},
		},
	}
}

const hex64 = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func mustParse(t *testing.T, value string) []Rule {
	t.Helper()
	rules, errs := Parse(value, annotationPath)
	require.Empty(t, errs)
	return rules
}

func str(t *testing.T, obj map[string]any, path ...string) string {
	t.Helper()
	s, _, err := unstructured.NestedString(obj, path...)
	require.NoError(t, err)
	return s
}

func container(t *testing.T, obj map[string]any, list string, i int) map[string]any {
	t.Helper()
	l, _, err := unstructured.NestedSlice(obj, "spec", "template", "spec", list)
	require.NoError(t, err)
	return l[i].(map[string]any)
}

func TestApplyInOrder(t *testing.T) {
	rules := mustParse(t, `[
		{"patches":[{"op":"add","path":"/metadata/labels/tier","value":"silver"}]},
		{"clusterSelector":[{"key":"region","operator":"in","values":["eu"]}],"labels":{"tier":"gold","app":null}},
		{"clusters":["c2"],"annotations":{"note":"c2"}}]`)
	base := deployment()
	eu, applied, err := Apply(rules, "c1", map[string]string{"region": "eu"}, base, annotationPath)
	require.NoError(t, err)
	assert.Equal(t, []int{0, 1}, applied)
	assert.Equal(t, "gold", str(t, eu, "metadata", "labels", "tier"), "the later rule wins")
	assert.NotContains(t, eu["metadata"].(map[string]any)["labels"], "app", "null removes")
	assert.Equal(t, "web", str(t, base, "metadata", "labels", "app"), "the input is left alone")

	us, applied, err := Apply(rules, "c2", map[string]string{"region": "us"}, base, annotationPath)
	require.NoError(t, err)
	assert.Equal(t, []int{0, 2}, applied)
	assert.Equal(t, "silver", str(t, us, "metadata", "labels", "tier"))
	assert.Equal(t, "c2", str(t, us, "metadata", "annotations", "note"))

	none, applied, err := Apply(mustParse(t, `[{"clusters":["x"],"labels":{"a":"b"}}]`), "c1", nil, base, annotationPath)
	require.NoError(t, err)
	assert.Empty(t, applied)
	assert.Equal(t, base, none)
}

func TestImage(t *testing.T) {
	cases := []struct {
		image                  Image
		app, sidecar, init, in string
		only                   string
	}{
		{image: Image{Tag: "2.0"}, app: "docker.io/team/web:2.0", sidecar: "localhost:5000/proxy:2.0", init: "busybox:2.0"},
		{image: Image{Registry: "eu.example.com"}, app: "eu.example.com/team/web:1.0",
			sidecar: "eu.example.com/proxy@sha256:" + hex64, init: "eu.example.com/busybox"},
		{image: Image{Repository: "other/web", Tag: "sha256:" + hex64}, only: "app",
			app: "docker.io/other/web@sha256:" + hex64, sidecar: "localhost:5000/proxy@sha256:" + hex64, init: "busybox"},
	}
	for _, tc := range cases {
		r := Rule{Image: &tc.image, Container: tc.only}
		out, err := r.apply(deployment(), field.NewPath("r"))
		require.Nil(t, err)
		assert.Equal(t, tc.app, container(t, out, "containers", 0)["image"])
		assert.Equal(t, tc.sidecar, container(t, out, "containers", 1)["image"])
		assert.Equal(t, tc.init, container(t, out, "initContainers", 0)["image"])
	}
	assert.Equal(t, "nginx", parseImage("nginx").String())
	assert.Equal(t, imageRef{registry: "r.io:5000", repository: "a/b", suffix: ":t"}, parseImage("r.io:5000/a/b:t"))
}

func TestEnvAndArgs(t *testing.T) {
	rules := mustParse(t, `[{"container":"app","env":[{"name":"A","value":"1"},{"name":"B","valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}}],"args":["--region=eu"]},
		{"container":"sidecar","args":[]}]`)
	out, _, err := Apply(rules, "c1", nil, deployment(), annotationPath)
	require.NoError(t, err)
	app := container(t, out, "containers", 0)
	assert.Equal(t, []any{map[string]any{"name": "A", "value": "1"},
		map[string]any{"name": "B", "valueFrom": map[string]any{"fieldRef": map[string]any{"fieldPath": "metadata.name"}}}}, app["env"])
	assert.Equal(t, []any{"--region=eu"}, app["args"])
	assert.NotContains(t, container(t, out, "containers", 1), "args", "an empty list removes them")
	assert.NotContains(t, container(t, out, "initContainers", 0), "env")
}

func TestApplyFails(t *testing.T) {
	cases := []struct {
		name, rules, want string
	}{
		{"a failed test", `[{"labels":{"a":"b"}},{"patches":[{"op":"test","path":"/spec/template/spec/containers/0/image","value":"nginx"}]}]`,
			"overrides][1].patches[0].path: Invalid value: \"/spec/template/spec/containers/0/image\": test does not apply"},
		{"a missing path", `[{"patches":[{"op":"replace","path":"/spec/strategy/type","value":"Recreate"}]}]`, "patches[0].path: Invalid value"},
		{"the spec whole changes replicas", `[{"patches":[{"op":"replace","path":"/spec","value":{"replicas":9}}]}]`,
			"patches[0].path: Forbidden: /spec: it changes spec.replicas"},
		{"the labels whole drop the federation's", `[{"patches":[{"op":"replace","path":"/metadata/labels","value":{"a":"b"}}]}]`,
			"federation.kubernetes.io/federation-name], the federation's own"},
		{"an unknown container", `[{"container":"db","image":{"tag":"1"}}]`, "[0].container: Not found: \"db\""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Apply(mustParse(t, tc.rules), "c1", nil, deployment(), annotationPath)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	configMap := map[string]any{"kind": "ConfigMap", "data": map[string]any{"a": "b"}}
	_, _, err := Apply(mustParse(t, `[{"image":{"tag":"1"}}]`), "c1", nil, configMap, annotationPath)
	assert.ErrorContains(t, err, "no pod template")
	out, _, err := Apply(mustParse(t, `[{"patches":[{"op":"replace","path":"/data/a","value":"c"},{"op":"add","path":"/data/n","value":3}]}]`), "c1", nil, configMap, annotationPath)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"a": "c", "n": int64(3)}, out["data"], "numbers stay int64 as in unstructured objects")
}

func TestCheck(t *testing.T) {
	// Rule 1 needs rule 0 (a cluster chosen by both), rule 2 applies on
	// its own only (rule 0 removed what it tests), rule 3 applies nowhere.
	rules := mustParse(t, `[
		{"clusters":["a"],"patches":[{"op":"remove","path":"/spec/template/spec/containers/0/env"},
			{"op":"add","path":"/spec/template/spec/containers/0/ports","value":[]}]},
		{"clusters":["a"],"patches":[{"op":"add","path":"/spec/template/spec/containers/0/ports/-","value":{"containerPort":80}}]},
		{"clusters":["b"],"patches":[{"op":"test","path":"/spec/template/spec/containers/0/env/0/name","value":"A"}]},
		{"clusters":["b"],"patches":[{"op":"remove","path":"/spec/selector"}]}]`)
	errs := Check(rules, deployment(), annotationPath)
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0].Error(), "metadata.annotations[federation.kubernetes.io/overrides][3].patches[0].path")
}
