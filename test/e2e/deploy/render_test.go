package deploy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/federation-v1/federation/test/memberenv"
)

// namespace is where the chart is rendered, as kubefed installs it.
const namespace = "federation-system"

// chartTool runs the real Helm on the repository's chart.
type chartTool struct {
	helm, root string
}

func newChartTool(t *testing.T) *chartTool {
	t.Helper()
	root, err := memberenv.RepoRoot()
	require.NoError(t, err)
	bins, err := memberenv.EnsureBinaries(context.Background(), root, t.Logf)
	require.NoError(t, err)
	return &chartTool{helm: bins.Helm, root: root}
}

func (c *chartTool) chart() string { return filepath.Join(c.root, "deploy", "charts", "federation") }

// run runs helm and returns its standard output, or an error carrying its
// standard error.
func (c *chartTool) run(args ...string) (string, error) {
	cmd := exec.Command(c.helm, args...)
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+os.TempDir(), "HELM_CONFIG_HOME="+os.TempDir())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), errors.New(strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// template renders the chart as release fed with --set values.
func (c *chartTool) template(values ...string) (string, error) {
	args := []string{"template", "fed", c.chart(), "--namespace", namespace}
	for _, v := range values {
		args = append(args, "--set", v)
	}
	return c.run(args...)
}

// rendered is one rendering: its objects by kind/name.
type rendered struct {
	t       *testing.T
	yaml    string
	objects map[string]*unstructured.Unstructured
}

func (c *chartTool) mustTemplate(t *testing.T, values ...string) *rendered {
	t.Helper()
	out, err := c.template(values...)
	require.NoError(t, err, "helm template --set %v", values)
	return &rendered{t: t, yaml: out, objects: parseObjects(t, out)}
}

func parseObjects(t *testing.T, manifest string) map[string]*unstructured.Unstructured {
	t.Helper()
	objects := map[string]*unstructured.Unstructured{}
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(manifest), 4096)
	for {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		if len(raw) == 0 || string(raw) == "null" {
			continue
		}
		// Unstructured's own decoding: integers stay int64.
		u := &unstructured.Unstructured{}
		require.NoError(t, u.UnmarshalJSON(raw))
		key := u.GetKind() + "/" + u.GetName()
		require.NotContains(t, objects, key, "rendered twice")
		objects[key] = u
	}
	return objects
}

// get returns the object kind/name, failing when it was not rendered.
func (r *rendered) get(kind, name string) *unstructured.Unstructured {
	r.t.Helper()
	obj, ok := r.objects[kind+"/"+name]
	require.True(r.t, ok, "%s/%s not rendered; rendered: %v", kind, name, r.keys())
	return obj
}

func (r *rendered) has(kind, name string) bool {
	_, ok := r.objects[kind+"/"+name]
	return ok
}

func (r *rendered) keys() []string {
	var keys []string
	for k := range r.objects {
		keys = append(keys, k)
	}
	return keys
}

// container is the first container of a workload.
func (r *rendered) container(kind, name string) map[string]any {
	r.t.Helper()
	containers, _, err := unstructured.NestedSlice(r.get(kind, name).Object, "spec", "template", "spec", "containers")
	require.NoError(r.t, err)
	require.NotEmpty(r.t, containers, "%s/%s has no container", kind, name)
	return containers[0].(map[string]any)
}

// command is the command line of a workload's container.
func (r *rendered) command(kind, name string) []string {
	r.t.Helper()
	cmd, _, err := unstructured.NestedStringSlice(r.container(kind, name), "command")
	require.NoError(r.t, err)
	return cmd
}

// secretData decodes the keys of a rendered Secret.
func (r *rendered) secretData(name string) map[string]string {
	r.t.Helper()
	data, _, err := unstructured.NestedStringMap(r.get("Secret", name).Object, "data")
	require.NoError(r.t, err)
	out := map[string]string{}
	for k, v := range data {
		b, err := decodeBase64(v)
		require.NoError(r.t, err, "Secret %s key %s", name, k)
		out[k] = string(b)
	}
	return out
}

// configMapData is the data of a rendered ConfigMap.
func (r *rendered) configMapData(name string) map[string]string {
	r.t.Helper()
	data, _, err := unstructured.NestedStringMap(r.get("ConfigMap", name).Object, "data")
	require.NoError(r.t, err)
	return data
}
