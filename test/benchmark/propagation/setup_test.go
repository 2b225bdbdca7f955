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
	env      *memberenv.Environment
	clusters []string
	// fed creates federated objects with no client-side rate limit.
	fed         kubernetes.Interface
	fedClusters versioned.Interface
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
	bn := startFederation(b, bin, memberenv.DefaultClusters(n, 1))
	bn.join(bn.names(0, n), joinFlags)
	bn.namespaces()
	fmt.Printf("clusters=%d: %d members and a federation joined to them ready after %s\n", n, n, time.Since(start).Round(time.Second))
	return bn
}

// startFederation starts the member clusters of specs and a local
// federation joined to none of them yet; everything stops when b ends.
func startFederation(b *testing.B, bin string, specs []memberenv.ClusterSpec) *bench {
	u := fedenv.NewUser(b, bin)
	env := fedenv.WithMembers(b, u, specs)
	u.InitFederation(federation)
	bn := &bench{b: b, u: u, env: env, watchers: map[string]kubernetes.Interface{}, ref: map[string]metadata.Interface{},
		workers: app.NewOptions().Propagation.Workers, memberPrograms: memberPrograms(env)}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: u.Kubeconfig}, &clientcmd.ConfigOverrides{CurrentContext: federation}).ClientConfig()
	if err != nil {
		b.Fatal(err)
	}
	cfg.QPS = -1
	if bn.fed, err = kubernetes.NewForConfig(cfg); err != nil {
		b.Fatal(err)
	}
	if bn.fedClusters, err = versioned.NewForConfig(cfg); err != nil {
		b.Fatal(err)
	}
	for _, spec := range specs {
		mcfg, err := env.RESTConfig(spec.Name)
		if err != nil {
			b.Fatal(err)
		}
		watch := rest.CopyConfig(mcfg)
		watch.QPS = -1
		watch.ContentType = "application/vnd.kubernetes.protobuf"
		if bn.watchers[spec.Name], err = kubernetes.NewForConfig(watch); err != nil {
			b.Fatal(err)
		}
	}
	return bn
}

// names are the member names clusterFROM+1..clusterTO.
func (bn *bench) names(from, to int) []string {
	var out []string
	for i := from + 1; i <= to; i++ {
		out = append(out, fmt.Sprintf("cluster%d", i))
	}
	return out
}

// joinersAtOnce is how many kubefed joins run together.
const joinersAtOnce = 4

// join joins the clusters (with their extra kubefed join flags), waits
// until they are Ready and adds them to the clusters the scenarios write
// to; the reference writes to those joined without extra flags.
func (bn *bench) join(clusters []string, joinFlags map[string][]string) {
	want := map[string]string{}
	bn.check(parallel(len(clusters), joinersAtOnce, func(i int) error {
		c := clusters[i]
		if out, err := bn.u.Kubefed(append([]string{"join", c, "--context=" + federation}, joinFlags[c]...)...); err != nil {
			return fmt.Errorf("kubefed join %s: %w\n%s", c, err, out)
		}
		return nil
	}))
	for _, c := range clusters {
		want[c] = "Ready"
	}
	bn.u.WaitClusterStatus(federation, 3*time.Minute, want)
	bn.clusters = append(bn.clusters, clusters...)
	for _, c := range clusters {
		if joinFlags[c] != nil {
			continue
		}
		ref, err := memberCredentials(bn.fedClusters, bn.fed, c)
		bn.check(err)
		ref.QPS, ref.Burst = membercluster.ClientQPS, membercluster.ClientBurst
		bn.ref[c], err = metadata.NewForConfig(ref)
		bn.check(err)
	}
}

// namespaces creates the federation's namespace (propagated) and the
// reference's (straight in every member), and waits until both exist
// everywhere and pods can be created in them (their default ServiceAccount
// exists; API-only members have no pods nor a controller to make it).
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
				var err error
				if bn.env.Member(c).Spec.APIOnly {
					_, err = bn.watchers[c].CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
				} else {
					_, err = bn.watchers[c].CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
				}
				if err != nil {
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
