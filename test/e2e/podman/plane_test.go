package podman_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/federation-v1/federation/pkg/freeport"
	"github.com/federation-v1/federation/pkg/httpprobe"
	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/test/e2e/podman/kubeplay"
	"github.com/federation-v1/federation/test/memberenv"
	"github.com/federation-v1/federation/test/podmanenv"
)

// nonRoot is the user the image and the chart run every container as.
const nonRoot = "65532"

// upTimeout bounds the time from podman kube play to the apiserver's
// /readyz (a few seconds when the machine is idle).
const upTimeout = 90 * time.Second

var image struct {
	once sync.Once
	ref  string
	err  error
}

// builtImage makes sure podman is there and builds the image once for the
// package, as `make image` does; warm, it only checks nothing changed.
func builtImage(t *testing.T) string {
	t.Helper()
	image.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
		defer cancel()
		if image.err = podmanenv.Ensure(ctx, t.Logf); image.err != nil {
			return
		}
		root, err := memberenv.RepoRoot()
		if err != nil {
			image.err = err
			return
		}
		start := time.Now()
		image.ref, image.err = podmanenv.BuildImage(ctx, root, t.Logf)
		t.Logf("building the image %s took %s", image.ref, time.Since(start).Round(time.Millisecond))
	})
	require.NoError(t, image.err, "podman and the image")
	return image.ref
}

// ports are the host ports a plane's pods listen on: on the host's network
// every one must be free and differ from the other plane's.
type ports struct {
	apiserver, controllerManager         int
	etcdClient, etcdPeer, etcdMetrics    int
	dns, dnsHealth, dnsReady, dnsMetrics int
}

func freePorts(t *testing.T) ports {
	t.Helper()
	pick := func() int {
		p, err := freeport.Pick("127.0.0.1")
		require.NoError(t, err)
		return p
	}
	return ports{
		apiserver: pick(), controllerManager: pick(),
		etcdClient: pick(), etcdPeer: pick(), etcdMetrics: pick(),
		dns: pick(), dnsHealth: pick(), dnsReady: pick(), dnsMetrics: pick(),
	}
}

// values are the chart values that make its pods playable by podman here:
// the host's network, one replica of each (they would share its ports),
// every port free and each Service's port its container's, so that a
// Service's load-balancer address reaches the pod listening on all
// addresses.
func (p ports) values(zone string) map[string]any {
	return map[string]any{
		"hostNetwork":  true,
		"internalHost": "127.0.0.1",
		"apiserver": map[string]any{
			"replicas": 1, "securePort": p.apiserver,
			"service": map[string]any{"port": p.apiserver},
		},
		"controllerManager": map[string]any{"replicas": 1, "securePort": p.controllerManager},
		"etcd": map[string]any{
			"replicas": 1, "clientPort": p.etcdClient, "peerPort": p.etcdPeer, "metricsPort": p.etcdMetrics,
			"persistence": map[string]any{"enabled": true},
		},
		"dns": map[string]any{
			"enabled": zone != "", "zone": zone, "replicas": 1,
			"port": p.dns, "healthPort": p.dnsHealth, "readyPort": p.dnsReady, "metricsPort": p.dnsMetrics,
			"service": map[string]any{"port": p.dns},
		},
	}
}

// writeValues writes values into a file for --values.
func writeValues(t *testing.T, values map[string]any) string {
	t.Helper()
	data, err := yaml.Marshal(values)
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "values.yaml")
	require.NoError(t, os.WriteFile(file, data, 0o600))
	return file
}

// podmanPlane is a control plane's pods played by podman for one test.
type podmanPlane struct {
	t      *testing.T
	player *kubeplay.Player
	plan   *kubeplay.Plan
	// opts adapted the plan (replay adapts the same way).
	opts kubeplay.Options
	// played is when podman kube play started.
	played time.Time
}

// play adapts the objects and plays them; everything podman made goes when
// the test ends, whether it failed or not (with the containers' logs when
// it failed).
func play(t *testing.T, objs []runtime.Object) *podmanPlane {
	t.Helper()
	return playWith(t, objs, kubeplay.Options{})
}

// playWith plays as play does, adapting with opts (its Prefix is the
// run's own).
func playWith(t *testing.T, objs []runtime.Object, opts kubeplay.Options) *podmanPlane {
	t.Helper()
	player := &kubeplay.Player{Podman: podmanenv.Podman, Dir: t.TempDir()}
	removeLeftovers(t, player)
	suffix := make([]byte, 3)
	_, err := rand.Read(suffix)
	require.NoError(t, err)
	prefix := runPrefix + strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(suffix) + "-"
	opts.Prefix = prefix
	plan, err := kubeplay.Adapt(objs, opts)
	require.NoError(t, err)
	t.Logf("podman plays %v (and not %v)", plan.Pods, plan.Skipped)
	p := &podmanPlane{t: t, plan: plan, player: player, opts: opts}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if t.Failed() {
			p.logContainers(ctx)
		}
		start := time.Now()
		assert.NoError(t, p.player.Remove(ctx, prefix))
		t.Logf("removing the pods, volumes and secrets took %s", time.Since(start).Round(time.Millisecond))
	})
	p.played = time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	require.NoError(t, p.player.Play(ctx, plan))
	return p
}

// replay plays the objects over the plane's pods, as a cluster rolls them
// to new specs; the claims' volumes (etcd's data) stay.
func (p *podmanPlane) replay(objs []runtime.Object) {
	p.t.Helper()
	plan, err := kubeplay.Adapt(objs, p.opts)
	require.NoError(p.t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p.played = time.Now()
	require.NoError(p.t, p.player.Replay(ctx, plan))
	p.plan = plan
}

// runPrefix starts the names of everything the tests make in podman,
// followed by the test process's id.
const runPrefix = "fede2e-"

// removeLeftovers removes what the runs of test processes that are gone
// left in podman (killed at a timeout, their cleanups never ran): pods on
// the host's network would hold their ports and memory for good.
func removeLeftovers(t *testing.T, player *kubeplay.Player) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	names, err := player.Names(ctx, runPrefix)
	require.NoError(t, err)
	gone := map[string]bool{}
	for _, name := range names {
		pid, _, _ := strings.Cut(strings.TrimPrefix(name, runPrefix), "-")
		if _, err := os.Stat("/proc/" + pid); err != nil && !gone[pid] {
			gone[pid] = true
			t.Logf("removing podman's leftovers of the test process %s", pid)
			assert.NoError(t, player.Remove(ctx, runPrefix+pid+"-"))
		}
	}
}

func (p *podmanPlane) logContainers(ctx context.Context) {
	cs, err := p.player.Containers(ctx, p.plan.Prefix)
	if err != nil {
		p.t.Logf("listing the containers: %v", err)
		return
	}
	for _, c := range cs {
		out, _ := p.player.Logs(ctx, c.Name)
		p.t.Logf("container %s (%s, %d restarts):\n%s", c.Name, c.State, c.Restarts, out)
	}
}

// waitReady waits until url answers 200, and fails at once when a
// container stopped; it logs how long it took from kube play.
func (p *podmanPlane) waitReady(url string) {
	p.t.Helper()
	err := poll.Until(context.Background(), upTimeout, url, func(ctx context.Context) error {
		if err := p.allUp(ctx); err != nil {
			return poll.Abort(err)
		}
		return httpprobe.GetOK(ctx, url)
	})
	require.NoError(p.t, err)
	p.t.Logf("%s answered %s after podman kube play", url, time.Since(p.played).Round(time.Millisecond))
}

// allUp fails unless every container of every pod runs, never restarted,
// as the non-root user.
func (p *podmanPlane) allUp(ctx context.Context) error {
	cs, err := p.player.Containers(ctx, p.plan.Prefix)
	if err != nil {
		return err
	}
	if len(cs) < len(p.plan.Pods) {
		return fmt.Errorf("%d containers for the pods %v", len(cs), p.plan.Pods)
	}
	for _, c := range cs {
		if c.State != "running" || c.Restarts != 0 || c.UID != nonRoot {
			return fmt.Errorf("container %s is %s after %d restarts, as user %q (want running, 0, %s)", c.Name, c.State, c.Restarts, c.UID, nonRoot)
		}
	}
	return nil
}

// requireAllUp checks allUp now, at the end of a test.
func (p *podmanPlane) requireAllUp() {
	p.t.Helper()
	require.NoError(p.t, p.allUp(context.Background()), "every container still up, as %s, never restarted", nonRoot)
}

func hostPort(host string, port int) string { return host + ":" + strconv.Itoa(port) }
