package hostplane

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

func validOptions() Options {
	return Options{
		Name: "fed", Namespace: "federation-system", Image: "localhost/federation:v1.2.3",
		ServiceType: corev1.ServiceTypeLoadBalancer, ServicePort: 443,
		EtcdPersistence: true, EtcdCapacity: "10Gi",
	}
}

func TestValidateNamesTheFlag(t *testing.T) {
	for flag, change := range map[string]func(*Options){
		"--api-server-service-type": func(o *Options) { o.ServiceType = corev1.ServiceTypeClusterIP },
		"--api-server-port":         func(o *Options) { o.ServicePort = 70000 },
		"--etcd-pv-capacity":        func(o *Options) { o.EtcdCapacity = "ten gigs" },
		"--image":                   func(o *Options) { o.Image = "localhost/federation@sha256:abc" },
	} {
		o := validOptions()
		require.NoError(t, o.Validate())
		change(&o)
		assert.ErrorContains(t, o.Validate(), flag)
	}
	o := validOptions()
	o.EtcdCapacity, o.EtcdServers = "ignored with an external etcd", []string{"https://etcd:2379"}
	assert.NoError(t, o.Validate())
}

func TestParseArgOverrides(t *testing.T) {
	args, err := ParseArgOverrides("--apiserver-arg-overrides", "--v=4, --audit-log-maxage=7")
	require.NoError(t, err)
	assert.Equal(t, []string{"--v=4", "--audit-log-maxage=7"}, args)
	args, err = ParseArgOverrides("--apiserver-arg-overrides", "")
	require.NoError(t, err)
	assert.Empty(t, args)
	for _, bad := range []string{"v=4", "--v=4,-x=1", "--=1", "--v=4,,--x=1"} {
		_, err := ParseArgOverrides("--controllermanager-arg-overrides", bad)
		assert.ErrorContains(t, err, "--controllermanager-arg-overrides", bad)
	}
}

func TestValuesFromOptionsWinOverTheFile(t *testing.T) {
	o := validOptions()
	o.APIServerArgs = []string{"--v=4"}
	o.ControllerManagerArgs = []string{"--v=3"}
	o.DNSZone = "example.com."
	o.EtcdStorageClass = "fast"
	o.File = map[string]any{
		"hostNetwork":  true,
		"internalHost": "127.0.0.1",
		"image":        map[string]any{"repository": "elsewhere/federation", "pullPolicy": "Never"},
		"apiserver":    map[string]any{"extraArgs": []any{"--profiling=false"}, "extraSANs": []any{"fed.example.com"}, "replicas": int64(1)},
		"dns":          map[string]any{"port": int64(15353)},
	}
	v := o.Values(Addresses{APIServer: "127.1.1.5:443", DNS: "127.1.1.6:53"})

	assert.Equal(t, "fed", v["federationName"])
	assert.Equal(t, map[string]any{"repository": "localhost/federation", "tag": "v1.2.3", "pullPolicy": "Never"}, v["image"])
	assert.Equal(t, true, v["hostNetwork"], "the file's values the flags do not set stay")
	assert.Equal(t, int64(1), valueAt(v, "apiserver", "replicas"))
	assert.Equal(t, []any{"--profiling=false", "--v=4"}, valueAt(v, "apiserver", "extraArgs"), "the flags' overrides come last: they win")
	assert.Equal(t, []any{"--v=3"}, valueAt(v, "controllerManager", "extraArgs"))
	assert.Equal(t, []any{"fed.example.com", "127.1.1.5"}, valueAt(v, "apiserver", "extraSANs"))
	assert.Equal(t, "LoadBalancer", valueAt(v, "apiserver", "service", "type"))
	assert.Equal(t, int64(443), valueAt(v, "apiserver", "service", "port"))
	assert.Equal(t, map[string]any{"enabled": true, "size": "10Gi", "storageClass": "fast"}, valueAt(v, "etcd", "persistence"))
	assert.Nil(t, valueAt(v, "etcd", "servers"))
	assert.Equal(t, true, valueAt(v, "dns", "enabled"))
	assert.Equal(t, "example.com.", valueAt(v, "dns", "zone"))
	assert.Equal(t, "127.1.1.6:53", valueAt(v, "dns", "advertiseAddress"))
	assert.Equal(t, int64(15353), valueAt(v, "dns", "port"))
	assert.Equal(t, "LoadBalancer", valueAt(v, "dns", "service", "type"))
	assert.Equal(t, "fed-credentials", valueAt(v, "certificates", "existingSecret"))
	assert.Equal(t, []any{"--profiling=false"}, valueAt(o.File, "apiserver", "extraArgs"), "the file's values are not changed")

	o.DNSZone, o.EtcdServers, o.File = "", []string{"https://etcd:2379"}, nil
	v = o.Values(Addresses{})
	assert.Equal(t, false, valueAt(v, "dns", "enabled"))
	assert.Equal(t, []any{"https://etcd:2379"}, valueAt(v, "etcd", "servers"))
	assert.Nil(t, valueAt(v, "apiserver", "extraSANs"), "no address yet")
}

func TestSplitImage(t *testing.T) {
	for image, want := range map[string][2]string{
		"localhost/federation:v1":      {"localhost/federation", "v1"},
		"localhost:5000/federation":    {"localhost:5000/federation", ""},
		"localhost:5000/federation:v2": {"localhost:5000/federation", "v2"},
		"federation":                   {"federation", ""},
	} {
		repo, tag, err := splitImage(image)
		require.NoError(t, err)
		assert.Equal(t, want, [2]string{repo, tag}, image)
	}
}
