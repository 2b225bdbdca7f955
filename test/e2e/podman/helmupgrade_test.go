package podman_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/test/fedenv"
	"github.com/federation-v1/federation/test/memberenv"
	"github.com/federation-v1/federation/test/podmanenv"
	"github.com/federation-v1/federation/test/releases"
)

// previous is the previous release and its image, built once.
var previous struct {
	once  sync.Once
	build releases.Build
	ref   string
	err   error
}

func previousRelease(t *testing.T) (releases.Build, string) {
	t.Helper()
	previous.once.Do(func() {
		start := time.Now()
		if previous.build, previous.err = releases.BuildPrevious(); previous.err == nil {
			previous.ref, previous.err = previous.build.Image(podmanenv.Podman)
		}
		t.Logf("the previous release %s and its image took %s", previous.build.Version, time.Since(start).Round(time.Millisecond))
	})
	require.NoError(t, previous.err)
	return previous.build, previous.ref
}

// TestHelmUpgradeOfTheHostChart installs the previous release's chart with
// the real helm into a host cluster (a member whose pods podman runs), has
// two members join and a divided Deployment with a LoadBalancer Service
// propagate, then upgrades the release with `helm upgrade` to the tree's
// chart and image: the pods roll to the new image on etcd's kept data, and
// the members see no write to the copies, the replicas stay where they
// were, and DNS answers the same.
func TestHelmUpgradeOfTheHostChart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two images, starts member clusters and runs the control plane's pods with podman")
	}
	ref := builtImage(t)
	prev, prevRef := previousRelease(t)
	root, err := memberenv.RepoRoot()
	require.NoError(t, err)
	ctx := context.Background()
	bins, err := memberenv.EnsureBinaries(ctx, root, t.Logf)
	require.NoError(t, err)
	old := fedenv.NewUser(t, prev.Bin)
	env := fedenv.WithMembers(t, old, memberenv.DefaultClusters(3, 1))
	host, err := env.Client("cluster1")
	require.NoError(t, err)
	helm := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bins.Helm, append(args, "--namespace", namespace, "--kube-context", "cluster1", "--kubeconfig", old.Kubeconfig)...)
		cmd.Env = append(os.Environ(), "HOME="+old.Home)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "helm %v:\n%s", args, out)
		return string(out)
	}

	// The previous release, installed by helm.
	p := freePorts(t)
	values := p.values("example.com.")
	values["image"] = imageValues(prevRef)
	// The federation's name is its kubectl context's, as kubefed join
	// names the member's objects after the context.
	values["federationName"] = "fed"
	values["apiserver"].(map[string]any)["advertiseAddress"] = "127.0.0.1"
	helm("install", "fed", prev.Chart(), "--create-namespace", "--values", writeValues(t, values))
	objs := waitPlaneObjects(t, host)
	plane := play(t, objs)
	apiserver := "https://" + hostPort("127.0.0.1", p.apiserver)
	plane.waitReady(apiserver + "/readyz")
	admin, err := host.CoreV1().Secrets(namespace).Get(ctx, "fed-admin-kubeconfig", metav1.GetOptions{})
	require.NoError(t, err, "the chart's admin kubeconfig")
	useAdminKubeconfig(t, old, admin.Data["kubeconfig"])
	assert.Contains(t, old.ServerVersion("fed"), prev.Version)

	members := []string{"cluster2", "cluster3"}
	for _, c := range members {
		old.MustKubefed("join", c, "--context=fed")
	}
	old.WaitClusterStatus("fed", time.Minute, map[string]string{"cluster2": "Ready", "cluster3": "Ready"})
	_, err = old.Kubectl().RunWithInput(ctx, web, "--context=fed", "apply", "-f", "-")
	require.NoError(t, err)
	divided := map[string]int32{"cluster2": 2, "cluster3": 2}
	waitDivided(t, env, "default", "web", divided)
	dnsServer := hostPort("127.0.0.1", p.dns)
	const name = "web.default.fed.svc.example.com."
	waitAnswer(t, dnsServer, name, []string{"127.1.2.1", "127.1.3.1"})
	settled := fedenv.SettledMemberWrites(t, env, members, 5*time.Second, converge)

	// helm upgrade to the tree's chart and image; the pods roll.
	helm("upgrade", "fed", filepath.Join(root, "deploy", "charts", "federation"), "--reuse-values",
		"--set", "image.repository="+imageValues(ref)["repository"].(string), "--set", "image.tag="+imageValues(ref)["tag"].(string))
	upgraded := waitPlaneObjects(t, host)
	plane.replay(upgraded)
	plane.waitReady(apiserver + "/readyz")
	current := *old
	current.Bin = binDir
	assert.Contains(t, current.ServerVersion("fed"), fedenv.Version, "the new apiserver serves")
	current.WaitClusterStatus("fed", time.Minute, map[string]string{"cluster2": "Ready", "cluster3": "Ready"})

	// The new controller manager works: a new object arrives...
	_, err = current.Kubectl().Run(ctx, "--context=fed", "create", "configmap", "after-upgrade", "-n", "default", "--from-literal=k=v")
	require.NoError(t, err)
	require.NoError(t, poll.Until(ctx, converge, "the new ConfigMap in the members", func(ctx context.Context) error {
		for _, c := range members {
			client, err := env.Client(c)
			if err != nil {
				return err
			}
			if _, err := client.CoreV1().ConfigMaps("default").Get(ctx, "after-upgrade", metav1.GetOptions{}); err != nil {
				return fmt.Errorf("%s: %w", c, err)
			}
		}
		return nil
	}))
	// ... and, for a while after, nothing else is written in the members,
	// whose logs do see the federation's writes (the new object's).
	fedenv.NoMemberWritesFor(t, env, members, settled, 20*time.Second, "after-upgrade")
	logged, err := env.FederationWritesSince(members, settled)
	require.NoError(t, err)
	for _, c := range members {
		assert.Contains(t, strings.Join(logged, "\n"), c+": create configmaps default/after-upgrade")
	}
	waitDivided(t, env, "default", "web", divided)
	waitAnswer(t, dnsServer, name, []string{"127.1.2.1", "127.1.3.1"})
	plane.requireAllUp()
}

// waitPlaneObjects waits until the host holds the control plane's
// workloads and returns them with what their pods mount.
func waitPlaneObjects(t *testing.T, host kubernetes.Interface) []runtime.Object {
	t.Helper()
	var objs []runtime.Object
	require.NoError(t, poll.Until(context.Background(), time.Minute, "the control plane's workloads in cluster1", func(ctx context.Context) error {
		var err error
		objs, err = planeObjects(ctx, host)
		return err
	}))
	return objs
}

// useAdminKubeconfig adds the chart's admin kubeconfig to the user's as
// the context fed.
func useAdminKubeconfig(t *testing.T, u *fedenv.User, admin []byte) {
	t.Helper()
	from, err := clientcmd.Load(admin)
	require.NoError(t, err)
	ctx := from.Contexts[from.CurrentContext]
	require.NotNil(t, ctx, "the admin kubeconfig's current context")
	mine, err := clientcmd.LoadFromFile(u.Kubeconfig)
	require.NoError(t, err)
	mine.Clusters["fed"], mine.AuthInfos["fed"] = from.Clusters[ctx.Cluster], from.AuthInfos[ctx.AuthInfo]
	mine.Contexts["fed"] = &clientcmdapi.Context{Cluster: "fed", AuthInfo: "fed"}
	require.NoError(t, clientcmd.WriteToFile(*mine, u.Kubeconfig))
}
