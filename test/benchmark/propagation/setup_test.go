package propagation

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/federation-v1/federation/federation-controller-manager/app"
	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/generated/clientset/versioned"
	"github.com/federation-v1/federation/pkg/localprocess"
	"github.com/federation-v1/federation/pkg/membercluster"
	"github.com/federation-v1/federation/pkg/memberrbac"
	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/pkg/processplane"
	"github.com/federation-v1/federation/test/fedenv"
	"github.com/federation-v1/federation/test/memberenv"
)

// Names of the run: the federation, its namespace, and the namespace the
// reference writes to in the members.
const (
	federation   = "bench"
	fedNamespace = "bench"
	refNamespace = "reference"
	// refLabel marks the reference's objects in the members.
	refLabel = "bench.federation.kubernetes.io/reference"
)

// bench is a federation joined to n member clusters, with the clients the
// scenarios use.
type bench struct {
	b        *testing.B
	u        *fedenv.User
	clusters []string
	// fed creates federated objects with no client-side rate limit.
	fed kubernetes.Interface
	// watchers observe the members with no client-side rate limit.
	watchers map[string]kubernetes.Interface
	// ref are the reference's member clients: the controller manager's
	// member settings (membercluster.ClientQPS/ClientBurst) and, like its
	// writes, answers asked for as protobuf metadata.
	ref map[string]metadata.Interface
	// workers is the reference's objects in flight per member: the
	// controller manager's --concurrent-object-syncs.
	workers int
	// rep collects the figures of every cluster count.
	rep *report
	// memberPrograms are the pids of the members' programs by group, to
	// tell where the machine's time goes.
	memberPrograms map[string][]int
	// quietFor are the waits for a quiet machine before each phase (see quiet).
	quietFor []time.Duration
}

// memberCredentials is how the controller manager reaches the member
// cluster: the joined cluster's address and the credentials kubefed join
// left in federation-system (a service account bound to cluster-admin). The
// reference writes with them too, so that the members check the same
// identity for both (RBAC walks its bindings on every request, which the
// environment's admin, in system:masters, skips).
func memberCredentials(fed versioned.Interface, core kubernetes.Interface, cluster string) (*rest.Config, error) {
	ctx := context.Background()
	c, err := fed.FederationV1beta1().Clusters().Get(ctx, cluster, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	if c.Spec.SecretRef == nil {
		return nil, fmt.Errorf("cluster %s has no secretRef", cluster)
	}
	secret, err := core.CoreV1().Secrets(federationv1beta1.SystemNamespace).Get(ctx, c.Spec.SecretRef.Name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return membercluster.RESTConfig(c, secret)
}

// memberPrograms groups the pids of the member clusters' programs: their
// kube-apiservers, their shared etcd, and the rest (controller managers,
// schedulers, kwok).
func memberPrograms(env *memberenv.Environment) map[string][]int {
	groups := map[string][]int{"etcd": {env.Etcd.Pid}}
	for _, m := range env.Members {
		for name, p := range m.Processes {
			group := "other member programs"
			if name == memberenv.KubeAPIServer {
				group = "kube-apiservers"
			}
			groups[group] = append(groups[group], p.Pid)
		}
	}
	return groups
}

// moduleRoot is the folder of go.mod.
func moduleRoot(b *testing.B) string {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		b.Fatalf("finding the module root: %v", err)
	}
	return filepath.Dir(strings.TrimSpace(string(out)))
}

// requireTools skips without the cached Kubernetes binaries.
func requireTools(b *testing.B) {
	path := filepath.Join(moduleRoot(b), ".cache", "bin", "kubernetes-v1.36.3", "kube-apiserver")
	if _, err := os.Stat(path); err != nil {
		b.Skipf("no cached Kubernetes binaries (%v): run make tools", err)
	}
}

// setUp starts n member clusters and a local federation joined to all of
// them; everything stops when b ends.
func setUp(b *testing.B, bin string, n int) *bench { return setUpWith(b, bin, n, nil) }

// setUpWith is setUp with extra kubefed join flags for some clusters (an
// agent member: the reference does not write to those).
func setUpWith(b *testing.B, bin string, n int, joinFlags map[string][]string) *bench {
	start := time.Now()
	u := fedenv.NewUser(b, bin)
	env := fedenv.WithMembers(b, u, memberenv.DefaultClusters(n, 1))
	u.InitFederation(federation)
	bn := &bench{b: b, u: u, watchers: map[string]kubernetes.Interface{}, ref: map[string]metadata.Interface{},
		workers: app.NewOptions().Propagation.Workers, memberPrograms: memberPrograms(env)}
	want := map[string]string{}
	for i := 1; i <= n; i++ {
		c := fmt.Sprintf("cluster%d", i)
		bn.clusters = append(bn.clusters, c)
		u.MustKubefed(append([]string{"join", c, "--context=" + federation}, joinFlags[c]...)...)
		want[c] = "Ready"
	}
	u.WaitClusterStatus(federation, 3*time.Minute, want)

	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: u.Kubeconfig}, &clientcmd.ConfigOverrides{CurrentContext: federation}).ClientConfig()
	if err != nil {
		b.Fatal(err)
	}
	cfg.QPS = -1
	if bn.fed, err = kubernetes.NewForConfig(cfg); err != nil {
		b.Fatal(err)
	}
	fedClusters, err := versioned.NewForConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range bn.clusters {
		mcfg, err := env.RESTConfig(c)
		if err != nil {
			b.Fatal(err)
		}
		watch := rest.CopyConfig(mcfg)
		watch.QPS = -1
		watch.ContentType = "application/vnd.kubernetes.protobuf"
		if bn.watchers[c], err = kubernetes.NewForConfig(watch); err != nil {
			b.Fatal(err)
		}
		if joinFlags[c] != nil {
			continue
		}
		ref, err := memberCredentials(fedClusters, bn.fed, c)
		if err != nil {
			b.Fatal(err)
		}
		ref.QPS, ref.Burst = membercluster.ClientQPS, membercluster.ClientBurst
		if bn.ref[c], err = metadata.NewForConfig(ref); err != nil {
			b.Fatal(err)
		}
	}
	bn.namespaces()
	fmt.Printf("clusters=%d: %d members and a federation joined to them ready after %s\n", n, n, time.Since(start).Round(time.Second))
	return bn
}

// namespaces creates the federation's namespace (propagated) and the
// reference's (straight in every member), and waits until pods can be
// created in both everywhere (their default ServiceAccount exists).
func (bn *bench) namespaces() {
	ctx := context.Background()
	if _, err := bn.fed.CoreV1().Namespaces().Create(ctx, namespace(fedNamespace), metav1.CreateOptions{}); err != nil {
		bn.b.Fatalf("creating namespace %s at the federation: %v", fedNamespace, err)
	}
	// The reference writes with the federation's member credentials, which
	// the members' admission policy lets write only in namespaces the
	// federation created: its namespace is marked so.
	ref := namespace(refNamespace)
	ref.Labels = map[string]string{memberrbac.CreatedByLabel: federation}
	for _, c := range bn.clusters {
		if _, err := bn.watchers[c].CoreV1().Namespaces().Create(ctx, ref, metav1.CreateOptions{}); err != nil {
			bn.b.Fatalf("creating namespace %s in %s: %v", refNamespace, c, err)
		}
	}
	err := poll.Until(ctx, 2*time.Minute, "namespaces "+fedNamespace+" and "+refNamespace+" with a default ServiceAccount in every member", func(ctx context.Context) error {
		for _, c := range bn.clusters {
			for _, ns := range []string{fedNamespace, refNamespace} {
				if _, err := bn.watchers[c].CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{}); err != nil {
					if apierrors.IsNotFound(err) {
						return fmt.Errorf("not yet in %s/%s", c, ns)
					}
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		bn.b.Fatal(err)
	}
}

func namespace(name string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

// planePIDs returns the process ids of the controller manager and the
// federation apiserver.
func (bn *bench) planePIDs() (controllerManager, apiserver int) {
	for _, p := range localprocess.FindMentioning(bn.u.PlaneDir(federation), fedenv.PlanePrograms()) {
		switch p.Name {
		case processplane.ControllerManager:
			controllerManager = p.Pid
		case processplane.APIServer:
			apiserver = p.Pid
		}
	}
	if controllerManager == 0 || apiserver == 0 {
		bn.b.Fatalf("finding the plane's processes: controller manager pid %d, apiserver pid %d", controllerManager, apiserver)
	}
	return controllerManager, apiserver
}
