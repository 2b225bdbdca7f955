package apiserver

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// serviceManifest is a Service of a type, with spec.clusterIP when given.
func serviceManifest(name, typ, clusterIP string) string {
	ip := ""
	if clusterIP != "" {
		ip = "\n  clusterIP: " + clusterIP
	}
	return fmt.Sprintf(`apiVersion: v1
kind: Service
metadata: {name: %s, namespace: ips}
spec:
  type: %s%s
  selector: {app: web}
  ports: [{name: http, port: 80}]
`, name, typ, ip)
}

// TestServiceClusterIPs checks the federation's virtual cluster IPs on a
// server of its own with a small --service-cluster-ip-range: the Service
// default/kubernetes on its first address, an address per Service never
// handed out twice (across a restart too), a given address honoured only
// in the range, none for headless and ExternalName Services, addresses
// released on deletion, and `kubectl get svc` showing them.
func TestServiceClusterIPs(t *testing.T) {
	dir, dataDir := t.TempDir(), filepath.Join(t.TempDir(), "data")
	const serviceRange = "--service-cluster-ip-range=198.19.7.0/28" // 198.19.7.1-14
	s, err := startServer(dir, dataDir, serviceRange)
	require.NoError(t, err)
	t.Cleanup(func() { s.stop() })
	k := newKubectl(t, kubectls[len(kubectls)-1], s.tokenConfig)

	// default/kubernetes, as in a cluster.
	waitFor(t, "the Service default/kubernetes", func() bool {
		_, _, err := k.run("", "-n", "default", "get", "service", "kubernetes")
		return err == nil
	})
	assert.Equal(t, "198.19.7.1", k.jsonpath(t, "services", "default", "kubernetes", ".spec.clusterIP"))
	assert.Equal(t, fmt.Sprintf("https 443 %d TCP", s.port),
		k.jsonpath(t, "services", "default", "kubernetes", `.spec.ports[0].name} {.spec.ports[0].port} {.spec.ports[0].targetPort} {.spec.ports[0].protocol`))
	assert.Equal(t, "true", k.jsonpath(t, "services", "default", "kubernetes", `.metadata.labels.federation\.kubernetes\.io/local`))

	// Kept: deleted, it comes back on the same address.
	k.must(t, "", "-n", "default", "delete", "service", "kubernetes")
	waitFor(t, "default/kubernetes to come back", func() bool {
		ip, _, err := k.run("", "-n", "default", "get", "service", "kubernetes", "-o", "jsonpath={.spec.clusterIP}")
		return err == nil && ip == "198.19.7.1"
	})

	k.must(t, "", "create", "namespace", "ips")
	seen := map[string]string{"198.19.7.1": "kubernetes"}
	for _, svc := range [][2]string{{"cip", "ClusterIP"}, {"np", "NodePort"}, {"lb", "LoadBalancer"}} {
		k.must(t, serviceManifest(svc[0], svc[1], ""), "create", "-f", "-")
		ip := k.jsonpath(t, "services", "ips", svc[0], ".spec.clusterIP")
		assert.True(t, strings.HasPrefix(ip, "198.19.7."), "%s got %q", svc[0], ip)
		assert.Empty(t, seen[ip], "%s got %s, already %s's", svc[0], ip, seen[ip])
		seen[ip] = svc[0]
		assert.Equal(t, ip, k.jsonpath(t, "services", "ips", svc[0], ".spec.clusterIPs[0]"))
		assert.Equal(t, "IPv4 SingleStack", k.jsonpath(t, "services", "ips", svc[0], ".spec.ipFamilies[0]} {.spec.ipFamilyPolicy"))
	}
	k.must(t, serviceManifest("headless", "ClusterIP", "None"), "create", "-f", "-")
	assert.Equal(t, "None", k.jsonpath(t, "services", "ips", "headless", ".spec.clusterIP"))
	k.must(t, "", "-n", "ips", "create", "service", "externalname", "ext", "--external-name=example.com")
	assert.Empty(t, k.jsonpath(t, "services", "ips", "ext", ".spec.clusterIP"))

	// CLUSTER-IP is the federation's address.
	table := k.must(t, "", "-n", "ips", "get", "services")
	for ip, name := range seen {
		if name != "kubernetes" {
			assert.Regexp(t, `(?m)^`+name+`\s+\S+\s+`+strings.ReplaceAll(ip, ".", `\.`)+`\s`, table)
		}
	}

	// A given address: honoured in the range, refused elsewhere or twice,
	// with the field named. (Free ones picked: the allocator picks at random.)
	var free []string
	for i := 2; i <= 14; i++ {
		if ip := fmt.Sprintf("198.19.7.%d", i); seen[ip] == "" {
			free = append(free, ip)
		}
	}
	mine, dry := free[0], free[1]
	k.must(t, serviceManifest("mine", "ClusterIP", mine), "create", "-f", "-")
	assert.Equal(t, mine, k.jsonpath(t, "services", "ips", "mine", ".spec.clusterIP"))
	stderr := k.fails(t, serviceManifest("taken", "ClusterIP", mine), "create", "-f", "-")
	assert.Contains(t, stderr, `spec.clusterIPs[0]: Invalid value: "`+mine+`": failed to allocate IP `+mine+` from the federation's service range: provided IP is already allocated`)
	stderr = k.fails(t, serviceManifest("member", "ClusterIP", "10.96.0.10"), "create", "-f", "-")
	assert.Contains(t, stderr, `spec.clusterIPs[0]: Invalid value: "10.96.0.10"`)
	assert.Contains(t, stderr, "The range of valid IPs is 198.19.7.0/28")
	// A server-side dry run takes no address.
	k.must(t, serviceManifest("dry", "ClusterIP", dry), "create", "--dry-run=server", "-f", "-")

	// Deletion releases: the address can be given again.
	k.must(t, "", "-n", "ips", "delete", "service", "mine")
	k.must(t, serviceManifest("again", "ClusterIP", mine), "create", "-f", "-")
	k.must(t, serviceManifest("dry-again", "ClusterIP", dry), "create", "-f", "-")
	seen[mine], seen[dry] = "again", "dry-again"

	// The allocations are in etcd: after a restart, new Services still get
	// addresses no one holds, until the range is full.
	s.stop()
	s, err = startServer(dir, dataDir, serviceRange)
	require.NoError(t, err)
	k = newKubectl(t, kubectls[len(kubectls)-1], s.tokenConfig)
	for i := 0; len(seen) < 14; i++ {
		name := fmt.Sprintf("after-restart-%d", i)
		k.must(t, serviceManifest(name, "ClusterIP", ""), "create", "-f", "-")
		ip := k.jsonpath(t, "services", "ips", name, ".spec.clusterIP")
		require.Empty(t, seen[ip], "%s got %s, already %s's", name, ip, seen[ip])
		seen[ip] = name
	}
	stderr = k.fails(t, serviceManifest("full", "ClusterIP", ""), "create", "-f", "-")
	assert.Contains(t, stderr, "failed to allocate a cluster IP from the federation's service range 198.19.7.0/28: range is full")
}

// TestBadServiceClusterIPRange: the flag's errors name it.
func TestBadServiceClusterIPRange(t *testing.T) {
	for _, tc := range []struct{ value, want string }{
		{"10.0.0.0", `not a CIDR (e.g. 198.18.0.0/16): invalid CIDR address: 10.0.0.0`},
		{"10.0.0.0/8", "--service-cluster-ip-range 10.0.0.0/8: must have 2 to 20 host bits (a /12 to /30), has 24"},
	} {
		_, err := startServer(t.TempDir(), filepath.Join(t.TempDir(), "data"), "--service-cluster-ip-range="+tc.value)
		require.Error(t, err, tc.value)
		assert.Contains(t, err.Error(), tc.want)
	}
}
