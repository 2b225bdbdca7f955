package kubefed_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/pkg/processplane"
	"github.com/federation-v1/federation/test/fedenv"
	"github.com/federation-v1/federation/test/memberenv"
)

// withMembers starts three member clusters, gives the user their contexts,
// and adds a context whose server does not answer, for the bad-input cases.
func withMembers(t *testing.T, u *fedenv.User) *memberenv.Environment {
	t.Helper()
	env := fedenv.WithMembers(t, u, memberenv.DefaultClusters(3, 2))
	mine, err := clientcmd.LoadFromFile(u.Kubeconfig)
	require.NoError(t, err)
	mine.Clusters["dead"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:1"}
	mine.AuthInfos["dead"] = &clientcmdapi.AuthInfo{Token: "x"}
	mine.Contexts["dead"] = &clientcmdapi.Context{Cluster: "dead", AuthInfo: "dead"}
	require.NoError(t, clientcmd.WriteToFile(*mine, u.Kubeconfig))
	return env
}

func TestJoinHealthAndUnjoin(t *testing.T) {
	ctx := context.Background()
	u := fedenv.NewUser(t, binDir)
	env := withMembers(t, u)
	u.InitFederation("fed", "--dns-provider=coredns", "--dns-zone-name=example.com.")
	// cluster3 has a cluster DNS of its own for join to extend.
	member3, err := env.Client("cluster3")
	require.NoError(t, err)
	_, err = member3.CoreV1().ConfigMaps("kube-system").Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "coredns"},
		Data:       map[string]string{"Corefile": ".:53 {\n    forward . /etc/resolv.conf\n}\n"},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	memberCorefile := func() string {
		cm, err := member3.CoreV1().ConfigMaps("kube-system").Get(ctx, "coredns", metav1.GetOptions{})
		require.NoError(t, err)
		return cm.Data["Corefile"]
	}
	fedSecrets := func() int {
		out, err := u.Kubectl().Run(ctx, "--context=fed", "get", "secrets", "-n", "federation-system", "-o", "name")
		require.NoError(t, err)
		return len(strings.Fields(out))
	}

	t.Run("join --dry-run prints the objects and creates none", func(t *testing.T) {
		out := u.MustKubefed("join", "cluster1", "--context=fed", "--dry-run")
		for _, kind := range []string{"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Secret", "Cluster",
			"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"} {
			assert.Contains(t, out, "kind: "+kind+"\n")
		}
		assert.Contains(t, out, "serverAddress: https://127.0.0.1:")
		_, err := u.Kubectl().Run(ctx, "--context=fed", "get", "cluster", "cluster1")
		assert.ErrorContains(t, err, "NotFound")
		member, err := env.Client("cluster1")
		require.NoError(t, err)
		_, err = member.RbacV1().ClusterRoles().Get(ctx, "federation-fed", metav1.GetOptions{})
		assert.True(t, apierrors.IsNotFound(err), "ClusterRole: %v", err)
	})

	for _, c := range []string{"cluster1", "cluster2", "cluster3"} {
		out := u.MustKubefed("join", c, "--context=fed")
		assert.Contains(t, out, fmt.Sprintf("cluster %q created\n", c))
	}
	assert.Regexp(t, `(?s)# BEGIN federation fed\nexample.com. \{\n    forward \. 127\.0\.0\.1:\d+\n\}\n# END federation fed`, memberCorefile(),
		"join points the member's cluster DNS at the federation zone")
	u.WaitClusterStatus("fed", 30*time.Second, map[string]string{"cluster1": "Ready", "cluster2": "Ready", "cluster3": "Ready"})
	rows, err := u.ClusterTable(ctx, "fed")
	require.NoError(t, err)
	assert.Equal(t, []string{"Ready", "us-east1-b", "us-east1"}, rows["cluster1"])
	assert.Equal(t, []string{"Ready", "us-east1-c", "us-east1"}, rows["cluster2"])
	assert.Equal(t, []string{"Ready", "europe-west1-b", "europe-west1"}, rows["cluster3"])

	t.Run("the controller manager serves health and per-cluster probe metrics", func(t *testing.T) {
		plane, err := processplane.Load(u.PlaneDir("fed"))
		require.NoError(t, err)
		admin, base, err := plane.ControllerManagerClient()
		require.NoError(t, err)
		anonymous := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{
			RootCAs: admin.Transport.(*http.Transport).TLSClientConfig.RootCAs, MinVersion: tls.VersionTLS12}}}
		// Health is open to anyone, as on kube-controller-manager;
		// metrics need a caller the federation authorizes.
		require.NoError(t, httpGet(ctx, anonymous, base+"/healthz", func(body string) error {
			if body != "ok" {
				return fmt.Errorf("/healthz said %q", body)
			}
			return nil
		}))
		err = httpGet(ctx, anonymous, base+"/metrics", func(string) error { return nil })
		require.Error(t, err)
		assert.Contains(t, err.Error(), "403 Forbidden", "anonymous /metrics")
		require.NoError(t, httpGet(ctx, admin, base+"/metrics", func(body string) error {
			for _, want := range []string{
				`federation_cluster_ready{cluster="cluster1"} 1`,
				`federation_cluster_probes_total{cluster="cluster2",result="Ready"}`,
				`federation_cluster_probe_duration_seconds_count{cluster="cluster3"}`,
			} {
				if !strings.Contains(body, want) {
					return fmt.Errorf("/metrics lacks %s", want)
				}
			}
			return nil
		}))
	})

	t.Run("the member account has only what the federated types need", func(t *testing.T) {
		member, err := env.Client("cluster1")
		require.NoError(t, err)
		_, err = member.CoreV1().ServiceAccounts("federation-system").Get(ctx, "federation-fed", metav1.GetOptions{})
		require.NoError(t, err)
		role, err := member.RbacV1().ClusterRoles().Get(ctx, "federation-fed", metav1.GetOptions{})
		require.NoError(t, err)
		for _, r := range role.Rules {
			assert.NotContains(t, r.Verbs, "*")
			assert.NotContains(t, r.Resources, "*")
			assert.NotContains(t, r.APIGroups, "*")
		}
		_, err = member.RbacV1().ClusterRoleBindings().Get(ctx, "federation-fed", metav1.GetOptions{})
		require.NoError(t, err)
		// The admission policy that bounds the account (test/e2e/security plays it).
		policy, err := member.AdmissionregistrationV1().ValidatingAdmissionPolicies().Get(ctx, "federation-fed", metav1.GetOptions{})
		require.NoError(t, err)
		binding, err := member.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Get(ctx, "federation-fed", metav1.GetOptions{})
		require.NoError(t, err)
		assert.Equal(t, policy.Name, binding.Spec.PolicyName)
	})

	t.Run("bad joins fail clearly and create nothing", func(t *testing.T) {
		before := fedSecrets()
		for _, tt := range []struct {
			args []string
			want string
		}{
			{[]string{"join", "cluster1", "--context=fed"}, `cluster "cluster1" is already joined`},
			{[]string{"join", "ghost", "--context=fed", "--cluster-context=nope"}, `context "nope"`},
			{[]string{"join", "dead", "--context=fed"}, "is not reachable"},
			{[]string{"join", "Bad_Name", "--context=fed"}, `cluster name "Bad_Name"`},
			{[]string{"join", "cluster1"}, "--context"},
			{[]string{"unjoin", "ghost", "--context=fed"}, `cluster "ghost" is not joined`},
		} {
			out, err := u.Kubefed(tt.args...)
			assert.Error(t, err, "kubefed %v", tt.args)
			assert.Contains(t, out, tt.want, "kubefed %v", tt.args)
		}
		assert.Equal(t, before, fedSecrets(), "no credentials Secret was left behind")
		for _, name := range []string{"ghost", "dead"} {
			_, err := u.Kubectl().Run(ctx, "--context=fed", "get", "cluster", name)
			assert.Error(t, err, "no Cluster %s was created", name)
		}
	})

	t.Run("join --refresh brings a member joined by an earlier version up to this kubefed", func(t *testing.T) {
		refreshAfterUpgrade(t, u, env)
	})

	t.Run("an unreachable member goes Offline and comes back, with events", func(t *testing.T) {
		require.NoError(t, env.StopAPIServer("cluster2"))
		// Probes every 10s, two failures needed: well within 45s.
		u.WaitClusterStatus("fed", 45*time.Second, map[string]string{"cluster2": "Offline", "cluster1": "Ready", "cluster3": "Ready"})
		require.NoError(t, env.StartAPIServer(ctx, "cluster2"))
		u.WaitClusterStatus("fed", 30*time.Second, map[string]string{"cluster2": "Ready"})
		require.NoError(t, poll.Until(ctx, 10*time.Second, "events of both transitions", func(ctx context.Context) error {
			out, err := u.Kubectl().Run(ctx, "--context=fed", "get", "events", "-A", "--field-selector=involvedObject.name=cluster2")
			if err != nil {
				return err
			}
			if !strings.Contains(out, "ClusterOffline") || !strings.Contains(out, "changed from Offline to Ready") {
				return fmt.Errorf("events:\n%s", out)
			}
			return nil
		}))
	})

	t.Run("unjoin removes both sides", func(t *testing.T) {
		secret, err := u.Kubectl().Run(ctx, "--context=fed", "get", "cluster", "cluster3", "-o", "jsonpath={.spec.secretRef.name}")
		require.NoError(t, err)
		out := u.MustKubefed("unjoin", "cluster3", "--context=fed")
		assert.Equal(t, "Successfully removed cluster \"cluster3\" from federation\n", out)
		assert.Equal(t, ".:53 {\n    forward . /etc/resolv.conf\n}\n", memberCorefile(), "unjoin restores the member's cluster DNS")
		_, err = u.Kubectl().Run(ctx, "--context=fed", "get", "cluster", "cluster3")
		assert.ErrorContains(t, err, "NotFound")
		_, err = u.Kubectl().Run(ctx, "--context=fed", "get", "secret", "-n", "federation-system", secret)
		assert.ErrorContains(t, err, "NotFound")
		member, err := env.Client("cluster3")
		require.NoError(t, err)
		_, err = member.CoreV1().ServiceAccounts("federation-system").Get(ctx, "federation-fed", metav1.GetOptions{})
		assert.True(t, apierrors.IsNotFound(err), "ServiceAccount: %v", err)
		_, err = member.RbacV1().ClusterRoles().Get(ctx, "federation-fed", metav1.GetOptions{})
		assert.True(t, apierrors.IsNotFound(err), "ClusterRole: %v", err)
		_, err = member.RbacV1().ClusterRoleBindings().Get(ctx, "federation-fed", metav1.GetOptions{})
		assert.True(t, apierrors.IsNotFound(err), "ClusterRoleBinding: %v", err)
		_, err = member.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Get(ctx, "federation-fed", metav1.GetOptions{})
		assert.True(t, apierrors.IsNotFound(err), "ValidatingAdmissionPolicyBinding: %v", err)
		_, err = member.AdmissionregistrationV1().ValidatingAdmissionPolicies().Get(ctx, "federation-fed", metav1.GetOptions{})
		assert.True(t, apierrors.IsNotFound(err), "ValidatingAdmissionPolicy: %v", err)
	})

	t.Run("unjoin of a member that is down removes the federation side and says what is left", func(t *testing.T) {
		require.NoError(t, env.StopAPIServer("cluster1"))
		out, err := u.Kubefed("unjoin", "cluster1", "--context=fed")
		require.NoError(t, err, out)
		assert.Contains(t, out, `warning: could not clean up cluster "cluster1"`)
		assert.Contains(t, out, `Successfully removed cluster "cluster1" from federation`)
		_, err = u.Kubectl().Run(ctx, "--context=fed", "get", "cluster", "cluster1")
		assert.ErrorContains(t, err, "NotFound")
	})
}

// httpGet fetches url and hands its body to check.
func httpGet(ctx context.Context, client *http.Client, url string, check func(body string) error) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return check(string(body))
}
