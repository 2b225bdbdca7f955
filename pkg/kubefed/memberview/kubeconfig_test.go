package memberview

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// fedKubeconfig is a kubeconfig with the federation context fed.
func fedKubeconfig() *clientcmdapi.Config {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["fed-cluster"] = &clientcmdapi.Cluster{Server: "https://fed.example:6443/", CertificateAuthorityData: []byte("CA"), TLSServerName: "fed"}
	cfg.AuthInfos["alice"] = &clientcmdapi.AuthInfo{Token: "t"}
	cfg.Contexts["fed"] = &clientcmdapi.Context{Cluster: "fed-cluster", AuthInfo: "alice", Namespace: "team-a"}
	return cfg
}

func actions(changes []contextChange) map[string]string {
	out := map[string]string{}
	for _, c := range changes {
		out[c.name] = c.action
	}
	return out
}

func TestPlanMemberContexts(t *testing.T) {
	cfg := fedKubeconfig()
	changes, err := planMemberContexts(cfg, "fed", []string{"c1", "c2"}, sets.New("c1", "c2"), false)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"fed/c1": contextCreated, "fed/c2": contextCreated}, actions(changes))
	assert.True(t, changed(changes))
	c1 := cfg.Clusters["fed/c1"]
	assert.Equal(t, "https://fed.example:6443/apis/federation/v1beta1/clusters/c1/proxy", c1.Server)
	assert.Equal(t, []byte("CA"), c1.CertificateAuthorityData)
	assert.Equal(t, "fed", c1.TLSServerName)
	assert.Equal(t, &clientcmdapi.Context{Cluster: "fed/c1", AuthInfo: "alice", Namespace: "team-a"}, cfg.Contexts["fed/c1"])
	assert.Len(t, cfg.AuthInfos, 1, "no credential is copied")

	// Again: nothing changes, even the namespace the user set since.
	cfg.Contexts["fed/c2"].Namespace = "team-b"
	before := cfg.DeepCopy()
	changes, err = planMemberContexts(cfg, "fed", []string{"c1", "c2"}, sets.New("c1", "c2"), false)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"fed/c1": contextUnchanged, "fed/c2": contextUnchanged}, actions(changes))
	assert.False(t, changed(changes))
	assert.Equal(t, before, cfg)

	// The federation's CA and user change: the members' entries follow.
	cfg.Clusters["fed-cluster"].CertificateAuthorityData = []byte("CA2")
	cfg.AuthInfos["bob"] = &clientcmdapi.AuthInfo{Token: "b"}
	cfg.Contexts["fed"].AuthInfo = "bob"
	changes, err = planMemberContexts(cfg, "fed", []string{"c1"}, nil, false)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"fed/c1": contextUpdated}, actions(changes))
	assert.Equal(t, []byte("CA2"), cfg.Clusters["fed/c1"].CertificateAuthorityData)
	assert.Equal(t, "bob", cfg.Contexts["fed/c1"].AuthInfo)

	// c2 leaves: kept and reported without prune, removed with; a context
	// fed/mine of the user's own is neither.
	cfg.Clusters["mine"] = &clientcmdapi.Cluster{Server: "https://mine.example"}
	cfg.Contexts["fed/mine"] = &clientcmdapi.Context{Cluster: "mine", AuthInfo: "alice"}
	cfg.CurrentContext = "fed/c2"
	changes, err = planMemberContexts(cfg, "fed", []string{"c1"}, sets.New("c1"), false)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"fed/c1": contextUnchanged, "fed/c2": contextStale}, actions(changes))
	assert.False(t, changed(changes))
	changes, err = planMemberContexts(cfg, "fed", []string{"c1"}, sets.New("c1"), true)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"fed/c1": contextUnchanged, "fed/c2": contextRemoved}, actions(changes))
	assert.NotContains(t, cfg.Contexts, "fed/c2")
	assert.NotContains(t, cfg.Clusters, "fed/c2")
	assert.Contains(t, cfg.Contexts, "fed/mine")
	assert.Empty(t, cfg.CurrentContext, "the current context was removed")

	_, err = planMemberContexts(cfg, "other", []string{"c1"}, nil, false)
	assert.ErrorContains(t, err, `kubeconfig has no context "other"`)
}

func TestKubeconfigCommand(t *testing.T) {
	ctx := context.Background()
	fed := newFakeFederation(t, map[string]*fakeMember{
		"cluster1": {},
		"cluster2": {pods: []corev1.Pod{testPod("team-a", "web-2", "10.0.2.1", "app")}},
		"cluster3": {},
	})
	kubeconfig := writeKubeconfig(t, fed)

	out, _, err := runCommand(ctx, "kubeconfig", "--kubeconfig="+kubeconfig, "--context=fed")
	require.NoError(t, err)
	assert.Contains(t, out, `Context "fed/cluster1" created (server `+fed.url+"/apis/federation/v1beta1/clusters/cluster1/proxy)")
	assert.Contains(t, out, `Context "fed/cluster3" created`)
	assert.Contains(t, out, "Kubeconfig updated. Try: kubectl --context=fed/cluster1 get pods")
	cfg, err := clientcmd.LoadFromFile(kubeconfig)
	require.NoError(t, err)
	assert.Len(t, cfg.Contexts, 4)
	assert.Len(t, cfg.AuthInfos, 1)
	assert.Equal(t, "fed", cfg.CurrentContext)
	assert.Equal(t, "alice", cfg.Contexts["fed/cluster2"].AuthInfo)
	assert.Equal(t, "team-a", cfg.Contexts["fed/cluster2"].Namespace)
	assert.Equal(t, fed.caPEM, cfg.Clusters["fed/cluster2"].CertificateAuthorityData)
	assert.Equal(t, "example.com", cfg.Clusters["fed/cluster2"].TLSServerName)

	// What kubectl --context=fed/cluster2 get pods does: a typed client of
	// the member context lists through the proxy.
	restCfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig}, &clientcmd.ConfigOverrides{CurrentContext: "fed/cluster2"}).ClientConfig()
	require.NoError(t, err)
	client, err := kubernetes.NewForConfig(restCfg)
	require.NoError(t, err)
	pods, err := client.CoreV1().Pods("team-a").List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, pods.Items, 1)
	assert.Equal(t, "web-2", pods.Items[0].Name)
	assert.NotEmpty(t, fed.received("/apis/federation/v1beta1/clusters/cluster2/proxy/api/v1/namespaces/team-a/pods"))

	// Again: nothing changes, not even the file.
	before, err := os.ReadFile(kubeconfig)
	require.NoError(t, err)
	out, _, err = runCommand(ctx, "kubeconfig", "--kubeconfig="+kubeconfig, "--context=fed")
	require.NoError(t, err)
	assert.Contains(t, out, `Context "fed/cluster2" unchanged`)
	assert.Contains(t, out, "Nothing to change in the kubeconfig.")
	after, err := os.ReadFile(kubeconfig)
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after))

	// cluster3 leaves: kept, then pruned.
	fed.removeMember("cluster3")
	out, _, err = runCommand(ctx, "kubeconfig", "--kubeconfig="+kubeconfig, "--context=fed")
	require.NoError(t, err)
	assert.Contains(t, out, `Context "fed/cluster3" kept: cluster cluster3 is no longer in the federation (--prune removes it)`)
	out, _, err = runCommand(ctx, "kubeconfig", "--kubeconfig="+kubeconfig, "--context=fed", "--prune")
	require.NoError(t, err)
	assert.Contains(t, out, `Context "fed/cluster3" removed`)
	cfg, err = clientcmd.LoadFromFile(kubeconfig)
	require.NoError(t, err)
	assert.NotContains(t, cfg.Contexts, "fed/cluster3")
	assert.NotContains(t, cfg.Clusters, "fed/cluster3")

	// A cluster named that the list does not have is refused, rather than
	// written and pruned at once.
	_, _, err = runCommand(ctx, "kubeconfig", "--kubeconfig="+kubeconfig, "--context=fed", "--prune", "--cluster=cluster3")
	require.ErrorContains(t, err, "cluster cluster3 is not in the federation of context fed")

	// A user who may not list the clusters names them.
	fed.setCanList(false)
	_, _, err = runCommand(ctx, "kubeconfig", "--kubeconfig="+kubeconfig, "--context=fed")
	require.ErrorContains(t, err, "you may not list the federation's clusters: name the members with --cluster")
	_, _, err = runCommand(ctx, "kubeconfig", "--kubeconfig="+kubeconfig, "--context=fed", "--prune", "--cluster=cluster1")
	require.ErrorContains(t, err, "--prune needs the list of the federation's clusters")
	out, _, err = runCommand(ctx, "kubeconfig", "--kubeconfig="+kubeconfig, "--context=fed", "--cluster=cluster1,cluster4")
	require.NoError(t, err)
	assert.Contains(t, out, `Context "fed/cluster1" unchanged`)
	assert.Contains(t, out, `Context "fed/cluster4" created`)

	_, _, err = runCommand(ctx, "kubeconfig", "--kubeconfig="+kubeconfig)
	require.ErrorContains(t, err, "--context")
	_, _, err = runCommand(ctx, "kubeconfig", "--kubeconfig="+kubeconfig, "--context=fed", "--cluster=Not_A_Name")
	require.ErrorContains(t, err, `--cluster "Not_A_Name"`)
}
