package podman_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"

	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/test/fedenv"
	"github.com/federation-v1/federation/test/memberenv"
)

// namespace is where kubefed init puts the control plane in the host.
const namespace = "federation-system"

// converge bounds propagation to the members and DNS records.
const converge = 90 * time.Second

// web is a federated Deployment and its LoadBalancer Service: the
// Deployment's replicas are divided over the members, and the Service
// gets DNS names of the members' load-balancer addresses.
const web = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 4
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx}]
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec:
  type: LoadBalancer
  selector: {app: web}
  ports: [{port: 80}]
`

// TestKubefedInitOnAHostCluster runs kubefed init --host-cluster-context
// against a member whose kwok nodes run no container; podman runs the pods
// init created there, and the federation then works through the context
// init wrote: members join, a Deployment is divided over them, and the
// federation's DNS server answers for the Service at the address of its
// own Service.
func TestKubefedInitOnAHostCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the image, starts member clusters and runs the control plane's pods with podman")
	}
	start := time.Now()
	ref := builtImage(t)
	u := fedenv.NewUser(t, binDir)
	env := fedenv.WithMembers(t, u, memberenv.DefaultClusters(3, 1))
	host, err := env.Client("cluster1")
	require.NoError(t, err)
	t.Logf("the image and the members took %s", time.Since(start).Round(time.Millisecond))

	p := freePorts(t)
	initCmd := startKubefed(t, u, "init", "fed", "--host-cluster-context=cluster1",
		"--api-server-service-type=LoadBalancer", "--api-server-port="+strconv.Itoa(p.apiserver),
		"--dns-provider=coredns", "--dns-zone-name=example.com.",
		"--image="+ref, "--values="+writeValues(t, p.values("example.com.")), "--wait-timeout=2m")
	objs, lbAddress := createdByInit(t, host, initCmd)
	// The member's load-balancer simulator gave the apiserver's Service an
	// address, on the Service's port, which is the pod's.
	require.Regexp(t, `^127\.1\.1\.\d+$`, lbAddress)
	apiserver := "https://" + hostPort(lbAddress, p.apiserver)
	plane := play(t, objs)
	plane.waitReady(apiserver + "/readyz")
	out := plane.waitFor(initCmd, 2*time.Minute)
	t.Logf("kubefed init:\n%s", out)
	server := regexp.MustCompile(`Federation API server is running at: (\S+)`).FindStringSubmatch(out)
	dnsServer := regexp.MustCompile(`Federation DNS server for example\.com\. is answering at: (\S+)`).FindStringSubmatch(out)
	require.NotNil(t, server, "init names the apiserver's address")
	require.NotNil(t, dnsServer, "init names the DNS server's address")
	require.Equal(t, apiserver, server[1])
	require.Regexp(t, `^127\.1\.1\.\d+:`+strconv.Itoa(p.dns)+`$`, dnsServer[1], "the DNS Service's load-balancer address")

	k := u.Kubectl()
	ctx := context.Background()
	got, err := k.Run(ctx, "--context=fed", "config", "view", "--minify", "-o", "jsonpath={.clusters[0].cluster.server}")
	require.NoError(t, err)
	require.Equal(t, apiserver, got, "the context fed names the apiserver's load-balancer address")
	for _, c := range []string{"cluster2", "cluster3"} {
		u.MustKubefed("join", c, "--context=fed", "--host-cluster-context=cluster1")
	}
	u.WaitClusterStatus("fed", time.Minute, map[string]string{"cluster2": "Ready", "cluster3": "Ready"})

	_, err = k.RunWithInput(ctx, web, "--context=fed", "apply", "-f", "-")
	require.NoError(t, err)
	waitDivided(t, env, "default", "web", map[string]int32{"cluster2": 2, "cluster3": 2})
	// Each member's first load-balancer Service has 127.1.N.1.
	waitAnswer(t, dnsServer[1], "web.default.fed.svc.example.com.", []string{"127.1.2.1", "127.1.3.1"})
	plane.requireAllUp()
	t.Logf("the whole test took %s", time.Since(start).Round(time.Millisecond))
}

// background is a kubefed command running while the test goes on.
type background struct {
	cmd *exec.Cmd
	out bytes.Buffer
	// exited is closed once the command ended with err.
	exited chan struct{}
	err    error
}

func startKubefed(t *testing.T, u *fedenv.User, args ...string) *background {
	t.Helper()
	b := &background{cmd: exec.Command(filepath.Join(u.Bin, "kubefed"), args...), exited: make(chan struct{})}
	b.cmd.Env = append(os.Environ(), "HOME="+u.Home, "KUBECONFIG="+u.Kubeconfig)
	b.cmd.Stdout, b.cmd.Stderr = &b.out, &b.out
	require.NoError(t, b.cmd.Start())
	go func() {
		b.err = b.cmd.Wait()
		close(b.exited)
	}()
	t.Cleanup(b.stop)
	return b
}

func (b *background) stop() {
	select {
	case <-b.exited:
	default:
		_ = b.cmd.Process.Kill()
		<-b.exited
	}
}

// waitFor waits for the command to succeed, failing at once when a
// container of the plane stops, and returns its output.
func (p *podmanPlane) waitFor(b *background, timeout time.Duration) string {
	p.t.Helper()
	err := poll.UntilEvery(context.Background(), timeout, time.Second, fmt.Sprintf("kubefed %v", b.cmd.Args[1:]), func(ctx context.Context) error {
		select {
		case <-b.exited:
			return nil
		default:
		}
		if err := p.allUp(ctx); err != nil {
			return poll.Abort(err)
		}
		return fmt.Errorf("still running")
	})
	if err != nil {
		b.stop()
	}
	require.NoError(p.t, err, b.out.String())
	require.NoError(p.t, b.err, "kubefed %v:\n%s", b.cmd.Args[1:], b.out.String())
	return b.out.String()
}

// createdByInit waits until init has created the control plane's
// workloads in the host, and returns them with the Secrets and ConfigMaps
// their pods mount: what a kubelet would run. init fails the test if it
// ends before.
func createdByInit(t *testing.T, host kubernetes.Interface, init *background) (objs []runtime.Object, lbAddress string) {
	t.Helper()
	err := poll.Until(context.Background(), 2*time.Minute, "the control plane's workloads in cluster1", func(ctx context.Context) error {
		select {
		case <-init.exited:
			return poll.Abort(fmt.Errorf("kubefed init ended (%v):\n%s", init.err, init.out.String()))
		default:
		}
		var err error
		if objs, err = planeObjects(ctx, host); err != nil {
			return err
		}
		// init waited for it before it made the workloads.
		svc, err := host.CoreV1().Services(namespace).Get(ctx, "fed-apiserver", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if ingress := svc.Status.LoadBalancer.Ingress; len(ingress) == 1 {
			lbAddress = ingress[0].IP
		}
		return nil
	})
	require.NoError(t, err)
	return objs, lbAddress
}

// planeObjects reads the control plane's workloads (of the release fed)
// from the host, with the Secrets and ConfigMaps their pods mount: what a
// kubelet would run.
func planeObjects(ctx context.Context, host kubernetes.Interface) ([]runtime.Object, error) {
	var objs []runtime.Object
	var specs []corev1.PodSpec
	for _, name := range []string{"fed-apiserver", "fed-controller-manager", "fed-dns"} {
		d, err := host.AppsV1().Deployments(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		objs = append(objs, d)
		specs = append(specs, d.Spec.Template.Spec)
	}
	s, err := host.AppsV1().StatefulSets(namespace).Get(ctx, "fed-etcd", metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	objs = append(objs, s)
	specs = append(specs, s.Spec.Template.Spec)
	mounted, err := mountedObjects(ctx, host, specs)
	if err != nil {
		return nil, err
	}
	return append(objs, mounted...), nil
}

// mountedObjects reads the Secrets and ConfigMaps the pod specs mount, once
// each.
func mountedObjects(ctx context.Context, host kubernetes.Interface, specs []corev1.PodSpec) ([]runtime.Object, error) {
	var objs []runtime.Object
	seen := map[string]bool{}
	for _, spec := range specs {
		for _, v := range spec.Volumes {
			var obj runtime.Object
			var err error
			switch {
			case v.Secret != nil && !seen["Secret/"+v.Secret.SecretName]:
				seen["Secret/"+v.Secret.SecretName] = true
				obj, err = host.CoreV1().Secrets(namespace).Get(ctx, v.Secret.SecretName, metav1.GetOptions{})
			case v.ConfigMap != nil && !seen["ConfigMap/"+v.ConfigMap.Name]:
				seen["ConfigMap/"+v.ConfigMap.Name] = true
				obj, err = host.CoreV1().ConfigMaps(namespace).Get(ctx, v.ConfigMap.Name, metav1.GetOptions{})
			default:
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("volume %s: %w", v.Name, err)
			}
			objs = append(objs, obj)
		}
	}
	return objs, nil
}

// waitDivided waits until each member's copy of the Deployment has the
// replicas in want.
func waitDivided(t *testing.T, env *memberenv.Environment, ns, name string, want map[string]int32) {
	t.Helper()
	got := map[string]int32{}
	err := poll.Until(context.Background(), converge, fmt.Sprintf("Deployment %s/%s divided %v", ns, name, want), func(ctx context.Context) error {
		for c := range want {
			client, err := env.Client(c)
			if err != nil {
				return err
			}
			d, err := client.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return fmt.Errorf("no copy in %s", c)
			}
			if err != nil {
				return err
			}
			got[c] = replicasOf(d)
		}
		for c, n := range want {
			if got[c] != n {
				return fmt.Errorf("the members hold %v", got)
			}
		}
		return nil
	})
	require.NoError(t, err)
}

func replicasOf(d *appsv1.Deployment) int32 {
	if d.Spec.Replicas == nil {
		return 1
	}
	return *d.Spec.Replicas
}

// waitAnswer waits until the DNS server answers name with the addresses.
func waitAnswer(t *testing.T, server, name string, want []string) {
	t.Helper()
	var got []string
	err := poll.Until(context.Background(), converge, fmt.Sprintf("%s at %s to answer %v", name, server, want), func(ctx context.Context) error {
		m := new(dns.Msg)
		m.SetQuestion(name, dns.TypeA)
		r, _, err := (&dns.Client{Timeout: 2 * time.Second}).ExchangeContext(ctx, m, server)
		if err != nil {
			return err
		}
		got = nil
		for _, rr := range r.Answer {
			if a, ok := rr.(*dns.A); ok {
				got = append(got, a.A.String())
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			return fmt.Errorf("%s answered %s %v", name, dns.RcodeToString[r.Rcode], got)
		}
		return nil
	})
	require.NoError(t, err)
}
