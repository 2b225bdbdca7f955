package apiserver

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/federation-v1/federation/pkg/embeddedetcd"
	"github.com/federation-v1/federation/pkg/poll"
)

// The election of the apiservers' controllers (pkg/apiserver): client-go's
// leader election with kube-controller-manager's timings.
const (
	// controllersLease is the Lease in federation-system.
	controllersLease = "federation-apiserver"
	haLeaseDuration  = 15 * time.Second
	haRetryPeriod    = 2 * time.Second
	// haJitter is client-go's: a standby tries every haRetryPeriod to
	// haRetryPeriod*(1+haJitter).
	haJitter = 1.2
	// keeperWindow is how long default/kubernetes is watched for writes:
	// more than twice the keeper's 10 s period.
	keeperWindow = 25 * time.Second
)

// haServer is one of the apiservers of an HA plane in the test.
type haServer struct {
	name string
	*server
	client kubernetes.Interface
}

// startHAServer starts an apiserver on the test's etcd, as kubefed init
// --ha starts its apiservers (on one etcd), each on a port of its own.
func startHAServer(t *testing.T, name, etcdURL string, extraArgs ...string) *haServer {
	t.Helper()
	s, err := startServer(t.TempDir(), filepath.Join(t.TempDir(), "unused"), append([]string{
		"--etcd-servers", etcdURL, "--etcd-prefix", "/federation-ha",
		// No controller manager removes the federation's finalizer here.
		"--disable-admission-plugins=FederationFinalizer"}, extraArgs...)...)
	require.NoError(t, err, "starting apiserver %s", name)
	t.Cleanup(s.stop)
	cfg, err := clientcmd.BuildConfigFromFlags("", s.tokenConfig)
	require.NoError(t, err)
	// Polls read the lease and every server's /metrics each poll.Interval.
	cfg.QPS, cfg.Burst = 100, 100
	client, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	return &haServer{name: name, server: s, client: client}
}

// leading is leader_election_master_status of the apiservers' lease on s's
// /metrics: 1 leading, 0 standing by.
func (s *haServer) leading(ctx context.Context) (float64, error) {
	body, err := s.client.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return 0, fmt.Errorf("reading %s's /metrics: %w", s.name, err)
	}
	m := regexp.MustCompile(`(?m)^leader_election_master_status\{name="` + controllersLease + `"\} (\S+)$`).FindSubmatch(body)
	if m == nil {
		return 0, fmt.Errorf("%s has no leader_election_master_status of %s on /metrics", s.name, controllersLease)
	}
	return strconv.ParseFloat(string(m[1]), 64)
}

// holds reports whether identity, a Lease's holder, is s's (host:port_uuid).
func (s *haServer) holds(identity string) bool {
	return strings.Contains(identity, ":"+strconv.Itoa(s.port)+"_")
}

// waitLeader waits until the lease names one of servers, which alone
// reports leading on /metrics, and returns it.
func waitLeader(t *testing.T, timeout time.Duration, servers ...*haServer) *haServer {
	t.Helper()
	var leader *haServer
	require.NoError(t, poll.Until(t.Context(), timeout, "one apiserver to hold the lease and lead, the others to stand by", func(ctx context.Context) error {
		lease, err := servers[0].client.CoordinationV1().Leases("federation-system").Get(ctx, controllersLease, metav1.GetOptions{})
		if err != nil {
			return err
		}
		holder := ""
		if lease.Spec.HolderIdentity != nil {
			holder = *lease.Spec.HolderIdentity
		}
		leader = nil
		for _, s := range servers {
			v, err := s.leading(ctx)
			if err != nil {
				return err
			}
			if s.holds(holder) != (v == 1) {
				return fmt.Errorf("the lease's holder is %q, %s (port %d) reports leading %v", holder, s.name, s.port, v)
			}
			if v == 1 {
				leader = s
			}
		}
		if leader == nil {
			return fmt.Errorf("no apiserver leads; the lease's holder is %q", holder)
		}
		return nil
	}))
	return leader
}

// waitKubernetesService waits until default/kubernetes is on to s's port.
func waitKubernetesService(t *testing.T, s *haServer) {
	t.Helper()
	require.NoError(t, poll.Until(t.Context(), time.Minute, "default/kubernetes on to "+s.name+"'s port", func(ctx context.Context) error {
		svc, err := s.client.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if got := svc.Spec.Ports[0].TargetPort.IntValue(); got != s.port {
			return fmt.Errorf("its targetPort is %d", got)
		}
		return nil
	}))
}

// deleteNamespace creates a namespace with a ConfigMap through s, deletes
// it and waits until it is gone: the namespace controller emptied it and
// removed its finalizer.
func deleteNamespace(t *testing.T, s *haServer, name string) time.Duration {
	t.Helper()
	ctx := t.Context()
	_, err := s.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = s.client.CoreV1().ConfigMaps(name).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "content"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	deleted := time.Now()
	require.NoError(t, s.client.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{}))
	require.NoError(t, poll.Until(ctx, time.Minute, "namespace "+name+" to be emptied and deleted", func(ctx context.Context) error {
		ns, err := s.client.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		return fmt.Errorf("still %s, finalizers %v", ns.Status.Phase, ns.Spec.Finalizers)
	}))
	return time.Since(deleted)
}

// TestHAAPIServersElectTheirControllers runs two apiservers on one etcd, as
// kubefed init --ha does (here on ports of their own): one leads the
// controllers that run inside the apiserver (namespace deletion,
// ClusterRole aggregation, the keeper of default/kubernetes), the other
// stands by; they work through either; default/kubernetes is not written
// back and forth; the cluster-IP repair, which runs in both, keeps what the
// other allocated. The leader stopped, the other leads at its next try (the
// lease was released); the leader killed, the other leads once the lease
// has expired. Each time namespace deletion works again.
func TestHAAPIServersElectTheirControllers(t *testing.T) {
	ctx := t.Context()
	etcd, err := embeddedetcd.Start(t.TempDir(), 0)
	require.NoError(t, err)
	t.Cleanup(etcd.Stop)

	first := startHAServer(t, "the first apiserver", etcd.ClientURL())
	// A Service through the first before the second starts: the second's
	// repair of the allocations, at its start, must keep its address.
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "before"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}, Selector: map[string]string{"app": "web"}},
	}
	before, err := first.client.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{})
	require.NoError(t, err)
	second := startHAServer(t, "the second apiserver", etcd.ClientURL())
	servers := []*haServer{first, second}

	leader := waitLeader(t, time.Minute, servers...)
	standby := second
	if leader == second {
		standby = first
	}
	t.Logf("%s (port %d) leads, %s (port %d) stands by", leader.name, leader.port, standby.name, standby.port)
	waitKubernetesService(t, leader)

	// Every write of default/kubernetes for keeperWindow, from now (the
	// list's resourceVersion); without an election each apiserver put its
	// own port back every 10 s.
	watchCtx, stopWatch := context.WithTimeout(ctx, keeperWindow)
	defer stopWatch()
	byName := fields.OneTermEqualSelector("metadata.name", "kubernetes").String()
	list, err := standby.client.CoreV1().Services("default").List(ctx, metav1.ListOptions{FieldSelector: byName})
	require.NoError(t, err)
	w, err := standby.client.CoreV1().Services("default").Watch(watchCtx, metav1.ListOptions{
		FieldSelector: byName, ResourceVersion: list.ResourceVersion,
	})
	require.NoError(t, err)
	var writes []string
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for ev := range w.ResultChan() {
			if s, ok := ev.Object.(*corev1.Service); ok {
				writes = append(writes, fmt.Sprintf("%s targetPort %s", ev.Type, s.Spec.Ports[0].TargetPort.String()))
			} else {
				writes = append(writes, fmt.Sprintf("%s %v", ev.Type, ev.Object))
			}
		}
	}()

	t.Run("namespace deletion and ClusterRole aggregation work through either apiserver", func(t *testing.T) {
		for _, s := range servers {
			deleteNamespace(t, s, "ha-through-"+strconv.Itoa(s.port))
		}
		role := &rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: "ha-aggregated", Labels: map[string]string{"rbac.authorization.k8s.io/aggregate-to-view": "true"}},
			Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"ha.example.com"}, Resources: []string{"widgets"}, Verbs: []string{"get"}}},
		}
		_, err := standby.client.RbacV1().ClusterRoles().Create(t.Context(), role, metav1.CreateOptions{})
		require.NoError(t, err)
		require.NoError(t, poll.Until(t.Context(), 30*time.Second, "the view ClusterRole to aggregate ha-aggregated's rule", func(ctx context.Context) error {
			view, err := standby.client.RbacV1().ClusterRoles().Get(ctx, "view", metav1.GetOptions{})
			if err != nil {
				return err
			}
			for _, r := range view.Rules {
				if len(r.APIGroups) == 1 && r.APIGroups[0] == "ha.example.com" {
					return nil
				}
			}
			return fmt.Errorf("view has %d rules, none for ha.example.com", len(view.Rules))
		}))
	})

	t.Run("the cluster-IP repair of either apiserver keeps the other's allocations", func(t *testing.T) {
		taken := svc.DeepCopy()
		taken.Name, taken.Spec.ClusterIP = "taken", before.Spec.ClusterIP
		_, err := second.client.CoreV1().Services("default").Create(t.Context(), taken, metav1.CreateOptions{})
		require.Error(t, err, "%s, allocated through the first apiserver, given again by the second", before.Spec.ClusterIP)
		assert.Contains(t, err.Error(), "provided IP is already allocated")
		// Services created through both at once get distinct addresses.
		var mu sync.Mutex
		ips := map[string]string{before.Spec.ClusterIP: "before"}
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Go(func() {
				s := svc.DeepCopy()
				s.Name = fmt.Sprintf("both-%d", i)
				created, err := servers[i%2].client.CoreV1().Services("default").Create(t.Context(), s, metav1.CreateOptions{})
				if !assert.NoError(t, err, s.Name) {
					return
				}
				mu.Lock()
				defer mu.Unlock()
				assert.Empty(t, ips[created.Spec.ClusterIP], "%s got %s, already %s's", s.Name, created.Spec.ClusterIP, ips[created.Spec.ClusterIP])
				ips[created.Spec.ClusterIP] = s.Name
			})
		}
		wg.Wait()
	})

	t.Run("default/kubernetes is not written back and forth", func(t *testing.T) {
		<-watched
		t.Logf("writes of default/kubernetes in %s: %v", keeperWindow, writes)
		require.ErrorIs(t, watchCtx.Err(), context.DeadlineExceeded, "the watch of default/kubernetes ended before its window")
		assert.Empty(t, writes, "default/kubernetes is written only by the leader, which wrote it before")
	})

	var next *haServer
	t.Run("the leader stopped, the standby leads at its next try", func(t *testing.T) {
		stopped := time.Now()
		leader.stop()
		next = waitLeader(t, haLeaseDuration+10*time.Second, standby)
		took := time.Since(stopped)
		t.Logf("SIGTERM of the leader: %s led %s after the signal (lease duration %s)", next.name, took.Round(10*time.Millisecond), haLeaseDuration)
		assert.Less(t, took, haLeaseDuration, "the lease was released: no wait for it to expire")
		waitKubernetesService(t, next)
		took = deleteNamespace(t, next, "ha-after-stop")
		t.Logf("a namespace was deleted %s after its deletion was asked", took.Round(10*time.Millisecond))
	})
	require.NotNil(t, next, "the previous step failed")

	t.Run("the leader killed, the restarted apiserver leads once the lease expired", func(t *testing.T) {
		restarted := startHAServer(t, "the restarted apiserver", etcd.ClientURL())
		require.Same(t, next, waitLeader(t, time.Minute, next, restarted), "the leader stays")
		killed := time.Now()
		require.NoError(t, next.process.Kill())
		require.Same(t, restarted, waitLeader(t, time.Minute, restarted))
		took := time.Since(killed)
		// It sees the last renewal at its next try, and takes the lease
		// at its first try a lease duration later (and a poll to see it).
		bound := haLeaseDuration + 2*time.Duration(float64(haRetryPeriod)*(1+haJitter)) + time.Second
		t.Logf("kill -9 of the leader: %s led %s after (lease duration %s)", restarted.name, took.Round(10*time.Millisecond), haLeaseDuration)
		assert.LessOrEqual(t, took, bound, "a standby leads within the lease duration plus two of its (jittered) tries")
		deleteNamespace(t, restarted, "ha-after-kill")
	})
}
