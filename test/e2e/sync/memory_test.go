package sync_test

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/federation-v1/federation/pkg/localprocess"
	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/pkg/processplane"
	"github.com/federation-v1/federation/test/fedenv"
	"github.com/federation-v1/federation/test/memberenv"
)

// TestMemoryGrowsWithFederatedObjects: with 1,000 federated ConfigMaps in 3
// clusters, adding 20,000 unrelated ConfigMaps to each member changes the
// controller manager's RSS by less than 10%. It takes several minutes and
// runs only with FEDERATION_MEMORY_TEST=1.
func TestMemoryGrowsWithFederatedObjects(t *testing.T) {
	if os.Getenv("FEDERATION_MEMORY_TEST") == "" {
		t.Skip("set FEDERATION_MEMORY_TEST=1 to run the memory measurement")
	}
	federated, unrelated := envInt("FEDERATED", 1000), envInt("UNRELATED", 20000)
	ctx := context.Background()
	u := fedenv.NewUser(t, binDir)
	env := fedenv.WithMembers(t, u, memberenv.DefaultClusters(3, 1))
	u.InitFederation("fed")
	u.JoinAll("fed", three...)
	f := newFixture(t, u, env)
	f.Apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: bench}\n")
	f.WaitIn(three, namespaces, "", "bench", labelled)
	baseline := f.rss()

	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: u.Kubeconfig}, &clientcmd.ConfigOverrides{CurrentContext: "fed"}).ClientConfig()
	require.NoError(t, err)
	cfg.QPS, cfg.Burst = 500, 1000
	fed, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	start := time.Now()
	createConfigMaps(t, fed, "bench", "fed-", federated)
	f.waitCount(three, configMaps, "bench", "fed-", federated)
	t.Logf("%d federated ConfigMaps in 3 clusters after %s", federated, time.Since(start).Round(time.Second))
	f.atRest(10 * time.Second)
	before := f.rss()
	cachedBefore := f.cachedConfigMaps()

	start = time.Now()
	for _, c := range three {
		mcfg, err := env.RESTConfig(c)
		require.NoError(t, err)
		mcfg.QPS, mcfg.Burst = 500, 1000
		member, err := kubernetes.NewForConfig(mcfg)
		require.NoError(t, err)
		_, err = member.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "noise"}}, metav1.CreateOptions{})
		require.NoError(t, err)
		createConfigMaps(t, member, "noise", "noise-", unrelated)
	}
	t.Logf("%d unrelated ConfigMaps in each member after %s", unrelated, time.Since(start).Round(time.Second))
	f.atRest(10 * time.Second)
	after := f.rss()
	cachedAfter := f.cachedConfigMaps()
	t.Logf("member caches hold %v ConfigMaps before and %v after the unrelated ones", cachedBefore, cachedAfter)
	require.Equal(t, float64(3*federated), cachedBefore, "the caches hold the federated ConfigMaps of the 3 members")
	require.Equal(t, cachedBefore, cachedAfter, "unrelated objects never enter the caches")
	growth := float64(after-before) / float64(before) * 100
	t.Logf("controller manager RSS: %d MiB with no objects, %d MiB with %d federated ConfigMaps, %d MiB after %d unrelated ConfigMaps per member (%+.1f%%)",
		baseline>>20, before>>20, federated, after>>20, unrelated, growth)
	require.Less(t, growth, 10.0, "memory must not grow with the members' unrelated objects")
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// createConfigMaps creates n ConfigMaps with 16 writers.
func createConfigMaps(t *testing.T, client kubernetes.Interface, ns, prefix string, n int) {
	t.Helper()
	data := map[string]string{"payload": strings.Repeat("x", 512)}
	next := make(chan int)
	errs := make(chan error, 16)
	for range 16 {
		go func() {
			for i := range next {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s%05d", prefix, i), Namespace: ns}, Data: data}
				err := wait.ExponentialBackoff(wait.Backoff{Duration: 100 * time.Millisecond, Factor: 2, Steps: 5}, func() (bool, error) {
					_, err := client.CoreV1().ConfigMaps(ns).Create(context.Background(), cm, metav1.CreateOptions{})
					return err == nil || apierrors.IsAlreadyExists(err), nil
				})
				if err != nil {
					errs <- fmt.Errorf("creating ConfigMap %s/%s: %w", ns, cm.Name, err)
					return
				}
			}
			errs <- nil
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	for range 16 {
		require.NoError(t, <-errs)
	}
}

// rss returns the median of five samples of the controller manager's
// resident memory, a second apart.
func (f *fixture) rss() int64 {
	f.T.Helper()
	procs := localprocess.FindMentioning(f.User.PlaneDir("fed"), map[string]bool{processplane.ControllerManager: true})
	require.Len(f.T, procs, 1)
	var samples []int64
	for i := range 5 {
		if i > 0 {
			time.Sleep(time.Second) // sampling interval of a measurement, not a wait for convergence
		}
		status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", procs[0].Pid))
		require.NoError(f.T, err)
		for _, line := range strings.Split(string(status), "\n") {
			if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
				require.NoError(f.T, err)
				samples = append(samples, kb<<10)
			}
		}
	}
	sort.Slice(samples, func(i, j int) bool { return samples[i] < samples[j] })
	return samples[len(samples)/2]
}

// cachedConfigMaps sums federation_member_cached_objects for configmaps, once
// the gauge (updated every 5s) shows every member.
func (f *fixture) cachedConfigMaps() float64 {
	f.T.Helper()
	var total float64
	require.NoError(f.T, poll.Until(context.Background(), 30*time.Second, "the cache gauge of 3 members", func(context.Context) error {
		total = 0
		n := 0
		for _, line := range strings.Split(f.metrics(), "\n") {
			if strings.HasPrefix(line, "federation_member_cached_objects{") && strings.Contains(line, `resource="configmaps"`) {
				fields := strings.Fields(line)
				v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
				if err != nil {
					return err
				}
				total += v
				n++
			}
		}
		if n != 3 {
			return fmt.Errorf("%d members in the gauge", n)
		}
		return nil
	}))
	return total
}
