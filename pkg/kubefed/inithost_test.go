package kubefed

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/federation-v1/federation/pkg/hostplane"
	"github.com/federation-v1/federation/pkg/version"
)

func TestInitHostFlagsAreValidated(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	host := "--host-cluster-context=host"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{}, "--host-cluster-context=CONTEXT is required"},
		{[]string{"--local", host}, "--local and --host-cluster-context exclude each other"},
		{[]string{host, "--api-server-service-type=ClusterIP"}, `--api-server-service-type "ClusterIP": want LoadBalancer or NodePort`},
		{[]string{host, "--apiserver-arg-overrides=--v=4,audit-log-path=x"}, `--apiserver-arg-overrides: "audit-log-path=x" is not --flag=value`},
		{[]string{host, "--controllermanager-arg-overrides=v=4"}, `--controllermanager-arg-overrides: "v=4"`},
		{[]string{host, "--etcd-pv-capacity=lots"}, `--etcd-pv-capacity "lots"`},
		{[]string{host, "--api-server-port=0"}, "--api-server-port 0"},
		{[]string{host, "--image=a/b@sha256:00"}, "--image"},
		{[]string{host, "--api-server-advertise-address=10.0.0.5"}, "add --api-server-service-type=NodePort"},
		{[]string{host, "--data-dir=/tmp/x"}, "--data-dir is for --local"},
		{[]string{host, "--ha"}, "--ha is for --local"},
		{[]string{host, "--dns-zone-name=example.com."}, "--dns-provider=coredns and --dns-zone-name go together"},
		{[]string{host, "--values=/nonexistent.yaml"}, "--values"},
		{[]string{host, "--wait-timeout=-1s"}, "--wait-timeout"},
		{[]string{"--local", "--image=x", "--etcd-pv-capacity=1Gi"}, "--image, --etcd-pv-capacity: only for a plane in a host cluster"},
	} {
		_, err := runKubefed(append([]string{"init", "fed"}, tc.args...)...)
		require.Error(t, err, tc.args)
		assert.ErrorContains(t, err, tc.want, tc.args)
	}
}

// TestInitHostDryRun renders every object with the flags' values and
// prints no private key; with no such context it creates nothing and
// reads nothing but says the host's APIs were not read.
func TestInitHostDryRun(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	values := filepath.Join(home, "values.yaml")
	require.NoError(t, os.WriteFile(values, []byte("hostNetwork: true\ninternalHost: 127.0.0.1\napiserver:\n  replicas: 1\n"), 0o600))
	out, err := runKubefed("init", "fed", "--host-cluster-context=nowhere", "--kubeconfig="+filepath.Join(home, "kubeconfig"),
		"--dry-run", "--dns-provider=coredns", "--dns-zone-name=example.com.", "--api-server-service-type=NodePort",
		"--apiserver-arg-overrides=--v=4", "--values="+values)
	require.NoError(t, err, out)
	assert.NotContains(t, out, "PRIVATE KEY")
	assert.Contains(t, out, "The host's APIs were not read")
	assert.NoFileExists(t, filepath.Join(home, "kubeconfig"), "no context written")

	kinds := map[string]map[string]any{}
	for _, doc := range strings.Split(out, "\n---\n")[1:] {
		var obj map[string]any
		require.NoError(t, yaml.Unmarshal([]byte(doc), &obj))
		meta := obj["metadata"].(map[string]any)
		kinds[obj["kind"].(string)+"/"+meta["name"].(string)] = obj
	}
	require.Contains(t, kinds, "Namespace/federation-system")
	secret := kinds["Secret/fed-credentials"]
	require.NotNil(t, secret, "the credentials Secret is shown")
	for _, k := range hostplane.SecretKeys {
		assert.Equal(t, "<issued by kubefed init>", secret["stringData"].(map[string]any)[k], k)
	}
	apiserver := kinds["Deployment/fed-apiserver"]
	require.NotNil(t, apiserver, "objects: %v", keys(kinds))
	text, err := yaml.Marshal(apiserver)
	require.NoError(t, err)
	assert.Contains(t, string(text), "image: localhost/federation:"+version.Get().GitVersion)
	assert.Contains(t, string(text), "--v=4")
	assert.Contains(t, string(text), "hostNetwork: true", "the values file is used")
	assert.Contains(t, string(text), "replicas: 1")
	assert.Contains(t, kinds, "Deployment/fed-dns")
}

func TestDeleteNeedsLocalOrHost(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	_, err := runKubefed("delete", "fed")
	assert.ErrorContains(t, err, "add --local (on this machine), or --host-cluster-context=CONTEXT")
	_, err = runKubefed("delete", "fed", "--local", "--host-cluster-context=host")
	assert.ErrorContains(t, err, "--local and --host-cluster-context exclude each other")
	_, err = runKubefed("delete", "fed", "--local", "--delete-data")
	assert.ErrorContains(t, err, "--delete-data is for a plane in a host cluster")
}

func keys(m map[string]map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
