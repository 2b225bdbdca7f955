package faults_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	federationclient "github.com/federation-v1/federation/pkg/generated/clientset/versioned"
	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/test/fedenv"
	"github.com/federation-v1/federation/test/memberenv"
)

// fedName is the federation of the suite, and its kubeconfig context.
const fedName = "fed"

// clusters are the members, all selected for every object.
var clusters = []string{"cluster1", "cluster2", "cluster3"}

// leaseName is the controller managers' leader election Lease, in
// federation-system.
const leaseName = "federation-controller-manager"

// fixture is the HA federation joined to the three members.
type fixture struct {
	t     *testing.T
	u     *fedenv.User
	env   *memberenv.Environment
	plane *planeControl
	// writes is the writer's client: HTTP/1.1, so that its connections
	// spread over both apiservers behind the shared port and a killed one
	// fails some of them, as it would a fleet of clients.
	writes kubernetes.Interface
	// reads is everyone else's client of the federation.
	reads    kubernetes.Interface
	clusters federationclient.Interface
	verifier *verifier
}

// newFixture starts the members and the HA federation and joins them.
func newFixture(t *testing.T) *fixture {
	u := fedenv.NewUser(t, binDir)
	// Two kwok nodes each: the six cases leave a few hundred pods.
	env := fedenv.WithMembers(t, u, memberenv.DefaultClusters(len(clusters), 2))
	u.InitFederation(fedName, "--ha")
	for _, c := range clusters {
		u.MustKubefed("join", c, "--context="+fedName)
	}
	ready := map[string]string{}
	for _, c := range clusters {
		ready[c] = "Ready"
	}
	u.WaitClusterStatus(fedName, time.Minute, ready)

	f := &fixture{t: t, u: u, env: env, plane: &planeControl{u: u}}
	cfg := f.restConfig(fedName, func(cfg *rest.Config) {
		cfg.QPS, cfg.Burst = 1000, 2000
		cfg.NextProtos = []string{"http/1.1"}
	})
	f.writes = kubernetes.NewForConfigOrDie(cfg)
	f.reads = kubernetes.NewForConfigOrDie(f.restConfig(fedName, nil))
	f.clusters = federationclient.NewForConfigOrDie(f.restConfig(fedName, nil))
	members := map[string]kubernetes.Interface{}
	for _, c := range clusters {
		members[c] = kubernetes.NewForConfigOrDie(f.restConfig(c, nil))
	}
	f.verifier = &verifier{fed: f.reads, members: members, fedName: fedName}
	return f
}

// restConfig is the user's kubeconfig context name, as protobuf, with a
// timeout per request and room for thousands of requests.
func (f *fixture) restConfig(context string, tune func(*rest.Config)) *rest.Config {
	f.t.Helper()
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: f.u.Kubeconfig},
		&clientcmd.ConfigOverrides{CurrentContext: context}).ClientConfig()
	require.NoError(f.t, err)
	cfg.QPS, cfg.Burst = 100, 200
	cfg.Timeout = 15 * time.Second
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	if tune != nil {
		tune(cfg)
	}
	return cfg
}

// leaseHolder reads the holder of the controller managers' Lease.
func (f *fixture) leaseHolder(ctx context.Context) (*coordinationv1.Lease, error) {
	return f.reads.CoordinationV1().Leases(federationv1beta1.SystemNamespace).Get(ctx, leaseName, metav1.GetOptions{})
}

// holder returns the identity in a Lease, "" if none.
func holder(l *coordinationv1.Lease) string {
	if l == nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// waitClusterReady waits until the federation sees the cluster Ready (or,
// with ready false, no longer Ready).
func (f *fixture) waitClusterReady(name string, ready bool, timeout time.Duration) error {
	return poll.Until(context.Background(), timeout, fmt.Sprintf("cluster %s Ready=%v at the federation", name, ready), func(ctx context.Context) error {
		c, err := f.clusters.FederationV1beta1().Clusters().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if got := federationv1beta1.IsClusterReady(c); got != ready {
			return fmt.Errorf("Ready is %v: %v", got, c.Status.Conditions)
		}
		return nil
	})
}

// createNamespace is the writer's op creating the case's namespace.
func (w *writer) createNamespace() op {
	return op{
		what: "create namespace",
		do: func(ctx context.Context, retried bool) error {
			_, err := w.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: w.ns}}, metav1.CreateOptions{})
			if retried && apierrors.IsAlreadyExists(err) {
				return nil
			}
			return err
		},
		acked: func(state) {},
	}
}

// deleteNamespace is the writer's op deleting the case's namespace.
func (w *writer) deleteNamespace() op {
	return op{
		what: "delete namespace",
		do: func(ctx context.Context, retried bool) error {
			err := w.client.CoreV1().Namespaces().Delete(ctx, w.ns, metav1.DeleteOptions{})
			// Gone, or already terminating (409): the attempt before went through.
			if retried && (apierrors.IsNotFound(err) || apierrors.IsConflict(err)) {
				return nil
			}
			return err
		},
		acked: func(want state) {
			clear(want.ConfigMaps)
			clear(want.Deployments)
		},
	}
}
