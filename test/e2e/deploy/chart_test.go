package deploy_test

import (
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/federation-v1/federation/deploy"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/keyutil"
	"sigs.k8s.io/yaml"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
)

// zone is the DNS zone every value set needs while dns.enabled.
const zone = "dns.zone=example.com."

func TestChart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Helm")
	}
	c := newChartTool(t)

	t.Run("helm lint --strict passes", func(t *testing.T) {
		out, err := c.run("lint", "--strict", c.chart(), "--set", zone)
		require.NoError(t, err, out)
		assert.Contains(t, out, "0 chart(s) failed")
	})

	t.Run("the default values render the whole control plane", func(t *testing.T) {
		r := c.mustTemplate(t, zone)
		want := []string{
			"Secret/fed-credentials", "Secret/fed-tokens", "Secret/fed-admin-kubeconfig", "Secret/fed-monitoring",
			"StatefulSet/fed-etcd", "Service/fed-etcd", "Service/fed-etcd-client", "NetworkPolicy/fed-etcd",
			"Deployment/fed-apiserver", "ConfigMap/fed-audit-policy", "Service/fed-apiserver", "PodDisruptionBudget/fed-apiserver",
			"Deployment/fed-controller-manager", "Service/fed-controller-manager", "PodDisruptionBudget/fed-controller-manager",
			"Deployment/fed-dns", "Service/fed-dns", "Service/fed-dns-metrics", "ConfigMap/fed-dns", "PodDisruptionBudget/fed-dns",
		}
		assert.ElementsMatch(t, want, r.keys())
		for key, obj := range r.objects {
			assert.Equal(t, namespace, obj.GetNamespace(), key)
			labels := obj.GetLabels()
			for _, l := range []string{"name", "instance", "component", "version", "managed-by"} {
				assert.NotEmpty(t, labels["app.kubernetes.io/"+l], "%s lacks app.kubernetes.io/%s", key, l)
			}
			assert.Contains(t, []string{"apiserver", "controller-manager", "dns", "etcd"}, labels["app.kubernetes.io/component"], key)
		}

		sts := r.get("StatefulSet", "fed-etcd")
		replicas, _, _ := unstructured.NestedInt64(sts.Object, "spec", "replicas")
		assert.EqualValues(t, 1, replicas)
		claims, _, _ := unstructured.NestedSlice(sts.Object, "spec", "volumeClaimTemplates")
		require.Len(t, claims, 1, "etcd's data on a PVC")
		size, _, _ := unstructured.NestedString(claims[0].(map[string]any), "spec", "resources", "requests", "storage")
		assert.Equal(t, "10Gi", size)
		clusterIP, _, _ := unstructured.NestedString(r.get("Service", "fed-etcd").Object, "spec", "clusterIP")
		assert.Equal(t, "None", clusterIP, "the etcd members' governing Service is headless")

		for _, d := range []string{"fed-apiserver", "fed-controller-manager"} {
			replicas, _, _ := unstructured.NestedInt64(r.get("Deployment", d).Object, "spec", "replicas")
			assert.EqualValues(t, 2, replicas, d)
		}
		apiserver := r.command("Deployment", "fed-apiserver")
		assert.Contains(t, apiserver, "--etcd-servers=https://fed-etcd-0.fed-etcd.federation-system.svc:2379")
		assert.Contains(t, apiserver, "--etcd-certfile=/etc/federation/pki/etcd-client.crt")
		assert.Contains(t, apiserver, "--encryption-provider-config=/etc/federation/pki/encryption-config.yaml")
		assert.Contains(t, apiserver, "--service-account-signing-key-file=/etc/federation/pki/service-account.key")
		assert.Contains(t, apiserver, "--secure-port=8443")
		// The audit log with the one policy a local plane uses too.
		assert.Contains(t, apiserver, "--audit-policy-file=/etc/federation/audit/audit-policy.yaml")
		assert.Contains(t, apiserver, "--audit-log-path=-")
		policy, err := deploy.Chart.ReadFile("charts/federation/files/audit-policy.yaml")
		require.NoError(t, err)
		assert.Equal(t, string(policy), r.configMapData("fed-audit-policy")["audit-policy.yaml"])
		cm := r.command("Deployment", "fed-controller-manager")
		for _, f := range []string{"--leader-elect=true", "--federation-name=federation", "--dns-provider=coredns",
			"--dns-provider-config=/etc/federation/dns/coredns-provider.conf", "--dns-zone-name=example.com."} {
			assert.Contains(t, cm, f)
		}
		assertService(t, r, "fed-apiserver", "ClusterIP", [][3]any{{"https", int64(443), "TCP"}})
		assertService(t, r, "fed-dns", "ClusterIP", [][3]any{{"dns", int64(53), "UDP"}, {"dns-tcp", int64(53), "TCP"}})
		corefile, _, _ := unstructured.NestedString(r.get("ConfigMap", "fed-dns").Object, "data", "Corefile")
		assert.Contains(t, corefile, "example.com.:5353 {")
		assert.Contains(t, corefile, "endpoint https://fed-etcd-0.fed-etcd.federation-system.svc:2379")
		provider, _, _ := unstructured.NestedString(r.get("ConfigMap", "fed-dns").Object, "data", "coredns-provider.conf")
		assert.Contains(t, provider, "coredns-endpoints = fed-dns.federation-system.svc:53")

		assertPods(t, r)
		assertProbes(t, r, "Deployment/fed-apiserver", "/livez", "/readyz", "HTTPS")
		assertProbes(t, r, "Deployment/fed-controller-manager", "/healthz", "/healthz", "HTTPS")
		assertProbes(t, r, "Deployment/fed-dns", "/health", "/ready", "HTTP")
		assertProbes(t, r, "StatefulSet/fed-etcd", "/livez", "/readyz", "HTTP")
		assertFlagsExist(t, r)
		assertCredentials(t, r)
	})

	t.Run("external etcd: no etcd of the chart, its URLs everywhere", func(t *testing.T) {
		r := c.mustTemplate(t, zone, "etcd.servers={https://etcd-a.example:2379,https://etcd-b.example:2379}")
		for _, key := range []string{"StatefulSet/fed-etcd", "Service/fed-etcd", "Service/fed-etcd-client", "NetworkPolicy/fed-etcd"} {
			assert.NotContains(t, r.keys(), key)
		}
		assert.Contains(t, r.command("Deployment", "fed-apiserver"), "--etcd-servers=https://etcd-a.example:2379,https://etcd-b.example:2379")
		assert.Contains(t, r.command("Deployment", "fed-apiserver"), "--etcd-cafile=/etc/federation/pki/etcd-ca.crt")
		corefile, _, _ := unstructured.NestedString(r.get("ConfigMap", "fed-dns").Object, "data", "Corefile")
		assert.Contains(t, corefile, "endpoint https://etcd-a.example:2379 https://etcd-b.example:2379")

		plain := c.mustTemplate(t, zone, "etcd.servers={http://127.0.0.1:2379}")
		for _, arg := range plain.command("Deployment", "fed-apiserver") {
			assert.NotContains(t, arg, "--etcd-cafile", "no client certificate for a plain-HTTP etcd")
		}
	})

	t.Run("NodePort and LoadBalancer Services, an advertised address", func(t *testing.T) {
		r := c.mustTemplate(t, zone, "apiserver.service.type=LoadBalancer", "apiserver.service.loadBalancerIP=203.0.113.10",
			"apiserver.advertiseAddress=203.0.113.10", "apiserver.extraSANs={federation.example.com}",
			"dns.service.type=NodePort", "dns.service.nodePort=30053", "dns.advertiseAddress=198.51.100.7:30053")
		assertService(t, r, "fed-apiserver", "LoadBalancer", [][3]any{{"https", int64(443), "TCP"}})
		ip, _, _ := unstructured.NestedString(r.get("Service", "fed-apiserver").Object, "spec", "loadBalancerIP")
		assert.Equal(t, "203.0.113.10", ip)
		assertService(t, r, "fed-dns", "NodePort", [][3]any{{"dns", int64(53), "UDP"}, {"dns-tcp", int64(53), "TCP"}})
		ports, _, _ := unstructured.NestedSlice(r.get("Service", "fed-dns").Object, "spec", "ports")
		for _, p := range ports {
			assert.EqualValues(t, 30053, p.(map[string]any)["nodePort"])
		}
		provider, _, _ := unstructured.NestedString(r.get("ConfigMap", "fed-dns").Object, "data", "coredns-provider.conf")
		assert.Contains(t, provider, "coredns-endpoints = 198.51.100.7:30053")
		creds := r.secretData("fed-credentials")
		serving := parseCert(t, creds["apiserver.crt"])
		assert.Contains(t, ipStrings(serving), "203.0.113.10")
		assert.Contains(t, serving.DNSNames, "federation.example.com")
		admin, err := clientcmd.Load([]byte(r.secretData("fed-admin-kubeconfig")["kubeconfig"]))
		require.NoError(t, err)
		assert.Equal(t, "https://203.0.113.10:443", admin.Clusters[admin.Contexts[admin.CurrentContext].Cluster].Server)
	})

	t.Run("monitoring: ServiceMonitors, the PrometheusRule and the dashboard from the kit's files", func(t *testing.T) {
		r := c.mustTemplate(t, zone, "serviceMonitor.enabled=true", "prometheusRule.enabled=true", "grafanaDashboard.enabled=true",
			"serviceMonitor.labels.release=prometheus")
		for _, name := range []string{"fed-apiserver", "fed-controller-manager", "fed-dns", "fed-etcd"} {
			sm := r.get("ServiceMonitor", name)
			assert.Equal(t, "prometheus", sm.GetLabels()["release"])
		}
		endpoints, _, _ := unstructured.NestedSlice(r.get("ServiceMonitor", "fed-controller-manager").Object, "spec", "endpoints")
		require.Len(t, endpoints, 1)
		token, _, _ := unstructured.NestedString(endpoints[0].(map[string]any), "authorization", "credentials", "name")
		assert.Equal(t, "fed-monitoring", token)

		rules, _, _ := unstructured.NestedSlice(r.get("PrometheusRule", "fed").Object, "spec", "groups")
		assert.ElementsMatch(t, []string{"FederationClusterOffline", "FederationPropagationErrors", "FederationDriftConflict",
			"FederationPropagationLatencyHigh", "FederationControllerManagerNoLeader"}, alertNames(rules))

		dashboard, _, _ := unstructured.NestedString(r.get("ConfigMap", "fed-grafana-dashboard").Object, "data", "federation.json")
		kit, err := os.ReadFile(filepath.Join(c.root, "deploy", "monitoring", "grafana-dashboard.json"))
		require.NoError(t, err)
		assert.JSONEq(t, string(kit), dashboard, "the chart's dashboard is deploy/monitoring's")
	})

	t.Run("three etcd members", func(t *testing.T) {
		r := c.mustTemplate(t, zone, "etcd.replicas=3")
		replicas, _, _ := unstructured.NestedInt64(r.get("StatefulSet", "fed-etcd").Object, "spec", "replicas")
		assert.EqualValues(t, 3, replicas)
		etcd := r.command("StatefulSet", "fed-etcd")
		assert.Contains(t, etcd, "--initial-cluster="+
			"fed-etcd-0=https://fed-etcd-0.fed-etcd.federation-system.svc:2380,"+
			"fed-etcd-1=https://fed-etcd-1.fed-etcd.federation-system.svc:2380,"+
			"fed-etcd-2=https://fed-etcd-2.fed-etcd.federation-system.svc:2380")
		assert.Contains(t, etcd, "--name=$(POD_NAME)")
		assert.True(t, r.has("PodDisruptionBudget", "fed-etcd"))
		var servers string
		for _, a := range r.command("Deployment", "fed-apiserver") {
			if s, ok := strings.CutPrefix(a, "--etcd-servers="); ok {
				servers = s
			}
		}
		assert.Len(t, strings.Split(servers, ","), 3, "the apiserver knows every member: %s", servers)
	})

	t.Run("an existing Secret: nothing generated, everything mounts it", func(t *testing.T) {
		r := c.mustTemplate(t, zone, "certificates.existingSecret=federation-credentials", "serviceMonitor.enabled=true")
		for key := range r.objects {
			assert.False(t, strings.HasPrefix(key, "Secret/"), "%s rendered", key)
		}
		for _, key := range []string{"Deployment/fed-apiserver", "Deployment/fed-controller-manager", "Deployment/fed-dns", "StatefulSet/fed-etcd"} {
			kind, name, _ := strings.Cut(key, "/")
			volumes, _, _ := unstructured.NestedSlice(r.get(kind, name).Object, "spec", "template", "spec", "volumes")
			found := false
			for _, v := range volumes {
				if s, _, _ := unstructured.NestedString(v.(map[string]any), "secret", "secretName"); s != "" {
					assert.Equal(t, "federation-credentials", s, key)
					found = true
				}
			}
			assert.True(t, found, "%s mounts the credentials", key)
		}
		for _, a := range r.command("Deployment", "fed-apiserver") {
			assert.NotContains(t, a, "--token-auth-file")
		}
		assert.False(t, r.has("ServiceMonitor", "fed-apiserver"), "no token to scrape the apiserver with")
		assert.True(t, r.has("ServiceMonitor", "fed-dns"))
	})

	t.Run("internalHost: every in-cluster URL and the internal listeners on it", func(t *testing.T) {
		r := c.mustTemplate(t, zone, "internalHost=127.0.0.1", "hostNetwork=true")
		assert.Contains(t, r.command("Deployment", "fed-apiserver"), "--etcd-servers=https://127.0.0.1:2379")
		// What Services point at listens on every address: a Service's
		// address reaches a host-network pod on the node's own address.
		assert.Contains(t, r.command("Deployment", "fed-apiserver"), "--bind-address=0.0.0.0")
		assert.NotContains(t, r.configMapData("fed-dns")["Corefile"], "bind ")
		assert.Contains(t, r.command("StatefulSet", "fed-etcd"), "--listen-client-urls=https://127.0.0.1:2379")
		hostNetwork, _, _ := unstructured.NestedBool(r.get("Deployment", "fed-dns").Object, "spec", "template", "spec", "hostNetwork")
		assert.True(t, hostNetwork)
		host, _, _ := unstructured.NestedString(r.container("Deployment", "fed-apiserver"), "readinessProbe", "httpGet", "host")
		assert.Equal(t, "127.0.0.1", host)
		kubeconfig, err := clientcmd.Load([]byte(r.secretData("fed-credentials")["controller-manager.kubeconfig"]))
		require.NoError(t, err)
		assert.Equal(t, "https://127.0.0.1:8443", kubeconfig.Clusters[kubeconfig.Contexts[kubeconfig.CurrentContext].Cluster].Server)
		provider, _, _ := unstructured.NestedString(r.get("ConfigMap", "fed-dns").Object, "data", "coredns-provider.conf")
		assert.Contains(t, provider, "coredns-endpoints = 127.0.0.1:5353")
	})

	t.Run("bad values are refused naming the field", func(t *testing.T) {
		for _, tc := range []struct {
			values []string
			want   string
		}{
			{nil, "dns.zone is required when dns.enabled is true"},
			{[]string{zone, "apiserver.service.type=External"}, "/apiserver/service/type"},
			{[]string{zone, "dns.service.type=Headless"}, "/dns/service/type"},
			{[]string{zone, "etcd.replicas=2"}, "/etcd/replicas"},
			{[]string{zone, "apiserver.securePort=http"}, "/apiserver/securePort"},
			{[]string{zone, "etcd.servers={etcd:2379}"}, "/etcd/servers/0"},
			{[]string{zone, "internalHost=127.0.0.1", "etcd.replicas=3"}, "etcd.replicas must be 1 with internalHost"},
			{[]string{zone, "apiserver.extraArgs={secure-port=1}"}, "/apiserver/extraArgs/0"},
		} {
			out, err := c.template(tc.values...)
			require.Error(t, err, "helm template --set %v rendered:\n%.300s", tc.values, out)
			assert.Contains(t, err.Error(), tc.want, "--set %v", tc.values)
		}
		// Without DNS no zone is needed.
		c.mustTemplate(t, "dns.enabled=false")
	})

	t.Run("deploy/manifests is the chart rendered by make manifests, without a private key", func(t *testing.T) {
		cmd := exec.Command(filepath.Join(c.root, "hack", "update-manifests.sh"), "--verify")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		for _, f := range []string{"federation.yaml", "monitoring.yaml"} {
			b, err := os.ReadFile(filepath.Join(c.root, "deploy", "manifests", f))
			require.NoError(t, err)
			assert.NotContains(t, string(b), "PRIVATE KEY")
			assert.NotContains(t, string(b), "kind: Secret\n")
		}
	})
}

// assertService checks a Service's type and its ports (name, port, protocol).
func assertService(t *testing.T, r *rendered, name, typ string, ports [][3]any) {
	t.Helper()
	svc := r.get("Service", name)
	got, _, _ := unstructured.NestedString(svc.Object, "spec", "type")
	assert.Equal(t, typ, got, name)
	list, _, _ := unstructured.NestedSlice(svc.Object, "spec", "ports")
	var have [][3]any
	for _, p := range list {
		m := p.(map[string]any)
		have = append(have, [3]any{m["name"], m["port"], m["protocol"]})
	}
	assert.ElementsMatch(t, ports, have, name)
}

// assertPods checks what every pod of the chart must have: no service
// account token, non-root and read-only, resources, the image's binaries.
func assertPods(t *testing.T, r *rendered) {
	t.Helper()
	for key, obj := range r.objects {
		if obj.GetKind() != "Deployment" && obj.GetKind() != "StatefulSet" {
			continue
		}
		pod, _, _ := unstructured.NestedMap(obj.Object, "spec", "template", "spec")
		assert.Equal(t, false, pod["automountServiceAccountToken"], key)
		nonRoot, _, _ := unstructured.NestedBool(pod, "securityContext", "runAsNonRoot")
		assert.True(t, nonRoot, key)
		seccomp, _, _ := unstructured.NestedString(pod, "securityContext", "seccompProfile", "type")
		assert.Equal(t, "RuntimeDefault", seccomp, key)
		kind, name, _ := strings.Cut(key, "/")
		c := r.container(kind, name)
		readOnly, _, _ := unstructured.NestedBool(c, "securityContext", "readOnlyRootFilesystem")
		assert.True(t, readOnly, key)
		drop, _, _ := unstructured.NestedStringSlice(c, "securityContext", "capabilities", "drop")
		assert.Equal(t, []string{"ALL"}, drop, key)
		memory, _, _ := unstructured.NestedString(c, "resources", "limits", "memory")
		assert.NotEmpty(t, memory, "%s has a memory limit", key)
		assert.Equal(t, "localhost/federation:dev", c["image"], key)
		assert.True(t, strings.HasPrefix(r.command(kind, name)[0], "/usr/local/bin/"), key)
	}
}

func assertProbes(t *testing.T, r *rendered, key, liveness, readiness, scheme string) {
	t.Helper()
	kind, name, _ := strings.Cut(key, "/")
	c := r.container(kind, name)
	for probe, path := range map[string]string{"livenessProbe": liveness, "readinessProbe": readiness} {
		got, _, _ := unstructured.NestedString(c, probe, "httpGet", "path")
		assert.Equal(t, path, got, "%s %s", key, probe)
		gotScheme, _, _ := unstructured.NestedString(c, probe, "httpGet", "scheme")
		assert.Equal(t, scheme, gotScheme, "%s %s", key, probe)
	}
}

var (
	helpOnce sync.Map // binary -> its --help output
	flagName = regexp.MustCompile(`^(--?[a-z0-9-]+)`)
)

// help is the binary's own usage text.
func help(t *testing.T, binary string) string {
	t.Helper()
	if h, ok := helpOnce.Load(binary); ok {
		return h.(string)
	}
	path := filepath.Join(binDir, binary)
	out, _ := exec.Command(path, "--help").CombinedOutput() // some exit 2 after printing usage
	if binary == "federation-dns" {
		out, _ = exec.Command(path, "-help").CombinedOutput()
	}
	require.NotEmpty(t, out, "%s --help", path)
	helpOnce.Store(binary, string(out))
	return string(out)
}

// assertFlagsExist checks every flag of every rendered command line against
// the real binary's --help: a wrong flag would crash the pod.
func assertFlagsExist(t *testing.T, r *rendered) {
	t.Helper()
	for key, obj := range r.objects {
		if obj.GetKind() != "Deployment" && obj.GetKind() != "StatefulSet" {
			continue
		}
		kind, name, _ := strings.Cut(key, "/")
		cmd := r.command(kind, name)
		binary := filepath.Base(cmd[0])
		usage := help(t, binary)
		for _, arg := range cmd[1:] {
			m := flagName.FindString(arg)
			if m == "" {
				continue // a flag's value given as the next argument
			}
			assert.Regexp(t, regexp.MustCompile(`(?m)^\s+`+regexp.QuoteMeta(m)+`[\s=',]`), usage, "%s: %s has no flag %s", key, binary, m)
		}
	}
}

// assertCredentials checks the generated credentials against the contract's
// names: a chain to the CA, the SANs the clients use, the controller
// manager's identity, the admin's token.
func assertCredentials(t *testing.T, r *rendered) {
	t.Helper()
	creds := r.secretData("fed-credentials")
	for _, k := range []string{"ca.crt", "apiserver.crt", "apiserver.key", "controller-manager.kubeconfig", "controller-manager.crt",
		"controller-manager.key", "etcd-ca.crt", "etcd-server.crt", "etcd-server.key", "etcd-client.crt", "etcd-client.key", "encryption-config.yaml", "service-account.key"} {
		assert.NotEmpty(t, creds[k], "fed-credentials key %s", k)
	}
	// The service-account signing key parses as the apiserver reads it.
	_, err := keyutil.ParsePrivateKeyPEM([]byte(creds["service-account.key"]))
	require.NoError(t, err, "service-account.key")
	assert.Equal(t, "keep", r.get("Secret", "fed-credentials").GetAnnotations()["helm.sh/resource-policy"])
	roots, etcdRoots := x509.NewCertPool(), x509.NewCertPool()
	require.True(t, roots.AppendCertsFromPEM([]byte(creds["ca.crt"])))
	require.True(t, etcdRoots.AppendCertsFromPEM([]byte(creds["etcd-ca.crt"])))
	verify := func(certPEM string, pool *x509.CertPool, name string, usage x509.ExtKeyUsage) *x509.Certificate {
		cert := parseCert(t, certPEM)
		_, err := cert.Verify(x509.VerifyOptions{Roots: pool, DNSName: name, KeyUsages: []x509.ExtKeyUsage{usage}})
		assert.NoError(t, err, "%s for %q", cert.Subject.CommonName, name)
		return cert
	}
	for _, name := range []string{"fed-apiserver.federation-system.svc", "fed-apiserver", "localhost", "127.0.0.1"} {
		verify(creds["apiserver.crt"], roots, name, x509.ExtKeyUsageServerAuth)
	}
	verify(creds["controller-manager.crt"], roots, "fed-controller-manager.federation-system.svc", x509.ExtKeyUsageServerAuth)
	for _, name := range []string{"fed-etcd-0.fed-etcd.federation-system.svc", "fed-etcd-client.federation-system.svc", "127.0.0.1"} {
		verify(creds["etcd-server.crt"], etcdRoots, name, x509.ExtKeyUsageServerAuth)
	}
	verify(creds["etcd-server.crt"], etcdRoots, "", x509.ExtKeyUsageClientAuth) // also the peers' client certificate
	verify(creds["etcd-client.crt"], etcdRoots, "", x509.ExtKeyUsageClientAuth)

	kubeconfig, err := clientcmd.Load([]byte(creds["controller-manager.kubeconfig"]))
	require.NoError(t, err)
	ctx := kubeconfig.Contexts[kubeconfig.CurrentContext]
	require.NotNil(t, ctx)
	assert.Equal(t, "https://fed-apiserver.federation-system.svc:443", kubeconfig.Clusters[ctx.Cluster].Server)
	client := verify(string(kubeconfig.AuthInfos[ctx.AuthInfo].ClientCertificateData), roots, "", x509.ExtKeyUsageClientAuth)
	assert.Equal(t, federationv1beta1.ControllerManagerUser, client.Subject.CommonName)

	var enc struct {
		Resources []struct {
			Resources []string
			Providers []map[string]struct {
				Keys []struct{ Name, Secret string }
			}
		}
	}
	require.NoError(t, yaml.Unmarshal([]byte(creds["encryption-config.yaml"]), &enc))
	require.Len(t, enc.Resources, 1)
	assert.Equal(t, []string{"secrets"}, enc.Resources[0].Resources)
	key, err := base64.StdEncoding.DecodeString(enc.Resources[0].Providers[0]["secretbox"].Keys[0].Secret)
	require.NoError(t, err)
	assert.Len(t, key, 32, "a secretbox key")

	tokens := r.secretData("fed-tokens")
	admin, err := clientcmd.Load([]byte(r.secretData("fed-admin-kubeconfig")["kubeconfig"]))
	require.NoError(t, err)
	adminCtx := admin.Contexts[admin.CurrentContext]
	assert.Equal(t, "https://fed-apiserver.federation-system.svc:443", admin.Clusters[adminCtx.Cluster].Server)
	token := admin.AuthInfos[adminCtx.AuthInfo].Token
	require.Len(t, token, 48)
	assert.Contains(t, tokens["tokens.csv"], token+`,admin,admin,"system:masters"`)
	assert.Contains(t, tokens["tokens.csv"], r.secretData("fed-monitoring")["token"]+`,federation-monitoring,federation-monitoring,"system:monitoring"`)
}

func parseCert(t *testing.T, certPEM string) *x509.Certificate {
	t.Helper()
	block, _ := pem.Decode([]byte(certPEM))
	require.NotNil(t, block, "no PEM block in %.80q", certPEM)
	cert, err := x509.ParseCertificate(block.Bytes)
	require.NoError(t, err)
	return cert
}

func ipStrings(cert *x509.Certificate) []string {
	var out []string
	for _, ip := range cert.IPAddresses {
		out = append(out, ip.String())
	}
	return out
}

func decodeBase64(s string) ([]byte, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("not base64: %w", err)
	}
	return b, nil
}

// alertNames lists the alerts of PrometheusRule groups.
func alertNames(groups []any) []string {
	var names []string
	for _, g := range groups {
		rules, _, _ := unstructured.NestedSlice(g.(map[string]any), "rules")
		for _, r := range rules {
			if name, ok := r.(map[string]any)["alert"].(string); ok {
				names = append(names, name)
			}
		}
	}
	return names
}
