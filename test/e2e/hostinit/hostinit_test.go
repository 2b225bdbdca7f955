package hostinit_test

import (
	"context"
	"crypto/x509"
	"fmt"
	"net"
	"sort"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	certutil "k8s.io/client-go/util/cert"

	"github.com/federation-v1/federation/pkg/hostplane"
	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/test/fedenv"
	"github.com/federation-v1/federation/test/memberenv"
)

const (
	ns       = "federation-system"
	instance = hostplane.LabelInstance + "=fed"
	image    = "localhost/federation:e2e"
)

func TestInitAndDeleteInAHostCluster(t *testing.T) {
	ctx := context.Background()
	u := fedenv.NewUser(t, binDir)
	env := fedenv.WithMembers(t, u, memberenv.DefaultClusters(1, 1))
	host, err := env.Client("cluster1")
	require.NoError(t, err)
	args := []string{"init", "fed", "--host-cluster-context=cluster1", "--image=" + image, "--wait-timeout=0",
		"--dns-provider=coredns", "--dns-zone-name=example.com.", "--etcd-pv-capacity=1Gi",
		"--apiserver-arg-overrides=--v=4,--audit-log-maxage=7", "--controllermanager-arg-overrides=--v=3"}

	t.Run("bad flags are refused, naming the flag, before anything is created", func(t *testing.T) {
		for flag, bad := range map[string][]string{
			"--api-server-service-type":          {"--api-server-service-type=ClusterIP"},
			"--apiserver-arg-overrides":          {"--apiserver-arg-overrides=v=4"},
			"--etcd-pv-capacity":                 {"--etcd-pv-capacity=lots"},
			"--local and --host-cluster-context": {"--local"},
		} {
			out, err := u.Kubefed(append(append([]string{}, args...), bad...)...)
			require.Error(t, err, out)
			assert.Contains(t, out, flag)
		}
		_, err := host.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		assert.True(t, apierrors.IsNotFound(err), "nothing created: %v", err)
	})

	t.Run("dry run prints the objects, no private key, and creates nothing", func(t *testing.T) {
		out := u.MustKubefed(append(append([]string{}, args...), "--dry-run")...)
		assert.Contains(t, out, "kind: StatefulSet")
		assert.Contains(t, out, "name: fed-credentials")
		assert.NotContains(t, out, "PRIVATE KEY")
		_, err := host.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		assert.True(t, apierrors.IsNotFound(err), "nothing created: %v", err)
		cfg, err := clientcmd.LoadFromFile(u.Kubeconfig)
		require.NoError(t, err)
		assert.NotContains(t, cfg.Contexts, "fed")
	})

	out := u.MustKubefed(args...)
	t.Logf("kubefed %s:\n%s", strings.Join(args, " "), out)
	assertInOrder(t, out,
		"Creating a namespace federation-system for federation system components... done",
		"Creating federation control plane service... done",
		"Creating federation control plane objects (credentials, persistent volume claim)... done",
		"Creating federation component deployments... done",
		"Updating kubeconfig... done",
		"Federation API server will be running at: https://")

	svc, err := host.CoreV1().Services(ns).Get(ctx, "fed-apiserver", metav1.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, corev1.ServiceTypeLoadBalancer, svc.Spec.Type)
	require.NotEmpty(t, svc.Status.LoadBalancer.Ingress)
	address := svc.Status.LoadBalancer.Ingress[0].IP
	assert.True(t, strings.HasPrefix(address, "127.1."), "the simulator's address: %s", address)
	server := "https://" + net.JoinHostPort(address, "443")
	assert.Contains(t, out, "Federation API server will be running at: "+server)

	secret, err := host.CoreV1().Secrets(ns).Get(ctx, "fed-credentials", metav1.GetOptions{})
	require.NoError(t, err)
	for _, k := range hostplane.SecretKeys {
		assert.NotEmpty(t, secret.Data[k], k)
	}
	certs, err := certutil.ParseCertsPEM(secret.Data[hostplane.KeyAPIServerCert])
	require.NoError(t, err)
	assert.NoError(t, certs[0].VerifyHostname(address), "the load balancer's address is in the apiserver's certificate")

	t.Run("the context is written: cluster, user and context fed, the admin certificate embedded", func(t *testing.T) {
		cfg, err := clientcmd.LoadFromFile(u.Kubeconfig)
		require.NoError(t, err)
		assert.Equal(t, "other", cfg.CurrentContext, "the current context stays")
		require.Contains(t, cfg.Contexts, "fed")
		assert.Equal(t, "fed", cfg.Contexts["fed"].Cluster)
		assert.Equal(t, "fed", cfg.Contexts["fed"].AuthInfo)
		assert.Equal(t, server, cfg.Clusters["fed"].Server)
		assert.Equal(t, secret.Data[hostplane.KeyCA], cfg.Clusters["fed"].CertificateAuthorityData)
		assert.NoError(t, hostplane.SignedBy(cfg.AuthInfos["fed"].ClientCertificateData, secret.Data[hostplane.KeyCA]))
		admin, err := certutil.ParseCertsPEM(cfg.AuthInfos["fed"].ClientCertificateData)
		require.NoError(t, err)
		assert.Equal(t, []string{"system:masters"}, admin[0].Subject.Organization)
		assert.Equal(t, x509.ExtKeyUsageClientAuth, admin[0].ExtKeyUsage[0])
		for k, v := range secret.Data {
			assert.NotContains(t, string(v), string(cfg.AuthInfos["fed"].ClientKeyData), "the admin's key is not in the host (%s)", k)
		}
	})

	t.Run("the workloads run the image with the overrides; DNS is wired to its Service's address", func(t *testing.T) {
		deployments, err := host.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{LabelSelector: instance})
		require.NoError(t, err)
		commands := map[string]string{}
		for _, d := range deployments.Items {
			c := d.Spec.Template.Spec.Containers[0]
			assert.Equal(t, image, c.Image, d.Name)
			commands[d.Name] = strings.Join(append(c.Command, c.Args...), " ")
		}
		assert.ElementsMatch(t, []string{"fed-apiserver", "fed-controller-manager", "fed-dns"}, keys(commands))
		assert.Contains(t, commands["fed-apiserver"], "--v=4")
		assert.Contains(t, commands["fed-apiserver"], "--audit-log-maxage=7")
		assert.Contains(t, commands["fed-controller-manager"], "--v=3")
		etcd, err := host.AppsV1().StatefulSets(ns).Get(ctx, "fed-etcd", metav1.GetOptions{})
		require.NoError(t, err)
		assert.Equal(t, image, etcd.Spec.Template.Spec.Containers[0].Image)

		dns, err := host.CoreV1().Services(ns).Get(ctx, "fed-dns", metav1.GetOptions{})
		require.NoError(t, err)
		require.NotEmpty(t, dns.Status.LoadBalancer.Ingress)
		config, err := host.CoreV1().ConfigMaps(ns).Get(ctx, "fed-dns", metav1.GetOptions{})
		require.NoError(t, err)
		assert.Contains(t, fmt.Sprint(config.Data), dns.Status.LoadBalancer.Ingress[0].IP+":53",
			"the controller manager's provider config names the DNS Service's address")
	})

	// The StatefulSet controller makes etcd's claim from its template.
	require.NoError(t, poll.Until(ctx, 30*time.Second, "etcd's PersistentVolumeClaim", func(ctx context.Context) error {
		_, err := host.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "data-fed-etcd-0", metav1.GetOptions{})
		return err
	}))

	t.Run("init again changes nothing", func(t *testing.T) {
		before := applied(t, host)
		require.Len(t, before, 17, "the chart's objects but the Namespace, and the credentials Secret: %v", before)
		cfgBefore, err := clientcmd.LoadFromFile(u.Kubeconfig)
		require.NoError(t, err)
		u.MustKubefed(args...)
		assert.Equal(t, before, applied(t, host))
		cfgAfter, err := clientcmd.LoadFromFile(u.Kubeconfig)
		require.NoError(t, err)
		assert.Equal(t, cfgBefore.AuthInfos["fed"], cfgAfter.AuthInfos["fed"], "the same admin credentials")
	})

	t.Run("another federation in the namespace is refused, naming the objects", func(t *testing.T) {
		out, err := u.Kubefed("init", "other", "--host-cluster-context=cluster1", "--wait-timeout=0")
		require.Error(t, err)
		assert.Contains(t, out, "Deployment/fed-apiserver (federation fed)")
	})

	t.Run("with NodePort the node port and the advertised address are the server", func(t *testing.T) {
		out := u.MustKubefed("init", "np", "--host-cluster-context=cluster1", "--federation-system-namespace=np-system",
			"--api-server-service-type=NodePort", "--api-server-advertise-address=127.0.0.1", "--etcd-persistent-storage=false",
			"--image="+image, "--wait-timeout=0")
		svc, err := host.CoreV1().Services("np-system").Get(ctx, "np-apiserver", metav1.GetOptions{})
		require.NoError(t, err)
		require.Equal(t, corev1.ServiceTypeNodePort, svc.Spec.Type)
		server := fmt.Sprintf("https://127.0.0.1:%d", svc.Spec.Ports[0].NodePort)
		assert.Contains(t, out, server)
		cfg, err := clientcmd.LoadFromFile(u.Kubeconfig)
		require.NoError(t, err)
		assert.Equal(t, server, cfg.Clusters["np"].Server)
		claims, err := host.CoreV1().PersistentVolumeClaims("np-system").List(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		assert.Empty(t, claims.Items, "no PVC without --etcd-persistent-storage")
		out = u.MustKubefed("delete", "np", "--host-cluster-context=cluster1", "--federation-system-namespace=np-system")
		assert.NotContains(t, out, "kept")
	})

	t.Run("delete removes the objects and the context, and keeps etcd's data", func(t *testing.T) {
		out := u.MustKubefed("delete", "fed", "--host-cluster-context=cluster1")
		t.Logf("kubefed delete:\n%s", out)
		assert.Contains(t, out, "[PersistentVolumeClaim] data-fed-etcd-0")
		left := applied(t, host)
		assert.Empty(t, left, "every object of the federation is gone")
		_, err := host.CoreV1().Secrets(ns).Get(ctx, "fed-credentials", metav1.GetOptions{})
		assert.True(t, apierrors.IsNotFound(err), "the credentials are gone: %v", err)
		_, err = host.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "data-fed-etcd-0", metav1.GetOptions{})
		assert.NoError(t, err, "etcd's claim is kept")
		cfg, err := clientcmd.LoadFromFile(u.Kubeconfig)
		require.NoError(t, err)
		assert.NotContains(t, cfg.Contexts, "fed")
		assert.NotContains(t, cfg.Clusters, "fed")
		assert.NotContains(t, cfg.AuthInfos, "fed")

		out = u.MustKubefed("delete", "fed", "--host-cluster-context=cluster1", "--delete-data")
		assert.Contains(t, out, "Federation \"fed\" deleted (1 object)")
		_, err = host.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "data-fed-etcd-0", metav1.GetOptions{})
		assert.True(t, apierrors.IsNotFound(err), "--delete-data deletes the claim: %v", err)
	})
}

// applied is every object of the federation kubefed applies, with what
// changes when it is written: the generation of workloads (their status
// moves on its own) and the resourceVersion of the others.
func applied(t *testing.T, host kubernetes.Interface) map[string]string {
	t.Helper()
	ctx := context.Background()
	opts := metav1.ListOptions{LabelSelector: instance}
	// Workloads and budgets by generation (their status moves on its own),
	// the others by resourceVersion.
	lists := []struct {
		kind       string
		generation bool
		list       func() (runtime.Object, error)
	}{
		{"Deployment", true, func() (runtime.Object, error) { return host.AppsV1().Deployments(ns).List(ctx, opts) }},
		{"StatefulSet", true, func() (runtime.Object, error) { return host.AppsV1().StatefulSets(ns).List(ctx, opts) }},
		{"Service", false, func() (runtime.Object, error) { return host.CoreV1().Services(ns).List(ctx, opts) }},
		{"Secret", false, func() (runtime.Object, error) { return host.CoreV1().Secrets(ns).List(ctx, opts) }},
		{"ConfigMap", false, func() (runtime.Object, error) { return host.CoreV1().ConfigMaps(ns).List(ctx, opts) }},
		{"PodDisruptionBudget", true, func() (runtime.Object, error) { return host.PolicyV1().PodDisruptionBudgets(ns).List(ctx, opts) }},
		{"NetworkPolicy", true, func() (runtime.Object, error) { return host.NetworkingV1().NetworkPolicies(ns).List(ctx, opts) }},
	}
	got := map[string]string{}
	for _, l := range lists {
		list, err := l.list()
		require.NoError(t, err)
		items, err := meta.ExtractList(list)
		require.NoError(t, err)
		for _, item := range items {
			o, err := meta.Accessor(item)
			require.NoError(t, err)
			got[l.kind+"/"+o.GetName()] = o.GetResourceVersion()
			if l.generation {
				got[l.kind+"/"+o.GetName()] = fmt.Sprint(o.GetGeneration())
			}
		}
	}
	return got
}

func assertInOrder(t *testing.T, out string, lines ...string) {
	t.Helper()
	rest := out
	for _, l := range lines {
		i := strings.Index(rest, l)
		if !assert.GreaterOrEqual(t, i, 0, "%q (in order) in:\n%s", l, out) {
			return
		}
		rest = rest[i+len(l):]
	}
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
