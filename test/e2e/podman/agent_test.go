package podman_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/federation-v1/federation/pkg/freeport"
	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/test/e2e/podman/kubeplay"
	"github.com/federation-v1/federation/test/fedenv"
	"github.com/federation-v1/federation/test/memberenv"
)

// unreachable is the address the agent member's Cluster records: it does
// not resolve (.invalid, RFC 2606), so the federation could not dial the
// member if it tried; only the agent, beside the member, reaches it.
const unreachable = "https://cluster1.invalid:6443"

// TestAgentDeploymentInTheMember joins a member through an agent that
// kubefed join installs in the member as a Deployment (the agent chart);
// podman runs that Deployment's pod, with the service account token a
// kubelet would give it. The federation, a local one, reaches the member
// only through the agent's tunnel; the agent keeps its certificate in a
// member Secret, so that its pod, removed and started again after the
// one-use bootstrap token was spent, connects again; unjoin deletes the
// agent from the member.
func TestAgentDeploymentInTheMember(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the image, starts a member cluster and runs the agent's pod with podman")
	}
	start := time.Now()
	ref := builtImage(t)
	u := fedenv.NewUser(t, binDir)
	env := fedenv.WithMembers(t, u, memberenv.DefaultClusters(1, 1))
	member, err := env.Client("cluster1")
	require.NoError(t, err)
	memberCfg, err := env.RESTConfig("cluster1")
	require.NoError(t, err)
	u.InitFederation("fed")
	t.Logf("the image, the member and the federation took %s", time.Since(start).Round(time.Millisecond))

	metricsPort, err := freeport.Pick("127.0.0.1")
	require.NoError(t, err)
	join := startKubefed(t, u, "join", "cluster1", "--context=fed", "--cluster-context=cluster1",
		"--connection=agent", "--server-address="+unreachable, "--agent-image="+ref,
		"--agent-values="+writeValues(t, map[string]any{"hostNetwork": true, "metrics": map[string]any{"port": metricsPort}}))
	objs := createdByJoin(t, member, join)
	accounts := serviceAccounts(t, member, memberCfg.Host)
	agent := playWith(t, objs, kubeplay.Options{ServiceAccounts: accounts})
	out := agent.waitFor(join, 3*time.Minute)
	t.Logf("kubefed join:\n%s", out)
	assert.Contains(t, out, `cluster "cluster1" created, reached through its agent`)
	assert.NotContains(t, out, "warning")
	joined := time.Now()

	ctx := context.Background()
	k := u.Kubectl()
	kubectl := func(args ...string) string {
		t.Helper()
		out, err := k.Run(ctx, append([]string{"--context=fed"}, args...)...)
		require.NoError(t, err, out)
		return out
	}
	assert.Regexp(t, `cluster1\s+Ready\s+.*Agent`, kubectl("get", "clusters"))
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	_, err = client.Get(unreachable + "/readyz")
	require.Error(t, err, "the address the Cluster records is not reachable from the federation's side")
	assert.Contains(t, err.Error(), "no such host")

	_, err = k.RunWithInput(ctx, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: default}\ndata: {color: blue}\n", "--context=fed", "apply", "-f", "-")
	require.NoError(t, err)
	require.NoError(t, poll.Until(ctx, converge, "ConfigMap default/settings in cluster1, through the agent", func(ctx context.Context) error {
		cm, err := member.CoreV1().ConfigMaps("default").Get(ctx, "settings", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if cm.Data["color"] != "blue" {
			return fmt.Errorf("data %v", cm.Data)
		}
		return nil
	}))

	// The agent's certificate is in the member's Secret, the one its own
	// account may write; the bootstrap token is spent.
	credential, err := member.CoreV1().Secrets(namespace).Get(ctx, "federation-agent-credential", metav1.GetOptions{})
	require.NoError(t, err)
	block, _ := pem.Decode(credential.Data["tls.crt"])
	require.NotNil(t, block, "federation-agent-credential holds a PEM certificate")
	cert, err := x509.ParseCertificate(block.Bytes)
	require.NoError(t, err)
	assert.Equal(t, "system:federation:agent:cluster1", cert.Subject.CommonName)
	assert.NotEmpty(t, credential.Data["tls.key"])
	assert.Empty(t, strings.TrimSpace(kubectl("get", "secrets", "-n", "federation-system", "-l", "federation.k8s.io/agent-cluster=cluster1", "-o", "name")),
		"the bootstrap token was used once and deleted")

	removed := time.Now()
	require.NoError(t, agent.remove(ctx))
	u.WaitClusterStatus("fed", time.Minute, map[string]string{"cluster1": "Offline"})
	assert.Equal(t, "TunnelDown", kubectl("get", "cluster", "cluster1", "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].reason}`))
	t.Logf("Offline %s after the agent's pod was removed", time.Since(removed).Round(time.Millisecond))

	// Played again, with its token spent: it has its certificate.
	replayed := time.Now()
	agent = playWith(t, objs, kubeplay.Options{ServiceAccounts: accounts})
	u.WaitClusterStatus("fed", time.Minute, map[string]string{"cluster1": "Ready"})
	agent.requireAllUp()
	t.Logf("Ready again %s after the agent's pod was played again", time.Since(replayed).Round(time.Millisecond))

	// Another federation's agent of the same member and cluster name: not
	// this federation's to delete.
	others := map[string]string{"app.kubernetes.io/name": "federation-agent", "app.kubernetes.io/managed-by": "kubefed",
		"federation.k8s.io/agent-cluster": "cluster1", "federation.k8s.io/agent-federation": "other"}
	_, err = member.CoreV1().Secrets(namespace).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "other-agent-credential", Labels: others}}, metav1.CreateOptions{})
	require.NoError(t, err)
	out = u.MustKubefed("unjoin", "cluster1", "--context=fed", "--cluster-context=cluster1")
	t.Logf("kubefed unjoin:\n%s", out)
	assert.Contains(t, out, "deleted the agent from the member's federation-system")
	gone := map[string]func() error{
		"Deployment federation-agent": func() error {
			_, err := member.AppsV1().Deployments(namespace).Get(ctx, "federation-agent", metav1.GetOptions{})
			return err
		},
		"ServiceAccount federation-agent": func() error {
			_, err := member.CoreV1().ServiceAccounts(namespace).Get(ctx, "federation-agent", metav1.GetOptions{})
			return err
		},
		"Role federation-agent": func() error {
			_, err := member.RbacV1().Roles(namespace).Get(ctx, "federation-agent", metav1.GetOptions{})
			return err
		},
		"RoleBinding federation-agent": func() error {
			_, err := member.RbacV1().RoleBindings(namespace).Get(ctx, "federation-agent", metav1.GetOptions{})
			return err
		},
		"ConfigMap federation-agent-ca": func() error {
			_, err := member.CoreV1().ConfigMaps(namespace).Get(ctx, "federation-agent-ca", metav1.GetOptions{})
			return err
		},
	}
	for _, s := range []string{"federation-agent-credential", "federation-agent-bootstrap", "federation-fed-token"} {
		gone["Secret "+s] = func() error {
			_, err := member.CoreV1().Secrets(namespace).Get(ctx, s, metav1.GetOptions{})
			return err
		}
	}
	for what, get := range gone {
		err := get()
		assert.True(t, apierrors.IsNotFound(err), "%s in the member after unjoin: %v", what, err)
	}
	_, err = member.CoreV1().Secrets(namespace).Get(ctx, "other-agent-credential", metav1.GetOptions{})
	assert.NoError(t, err, "another federation's agent is left alone")
	assert.NotContains(t, kubectl("get", "clusters"), "cluster1")
	// Its Deployment deleted, the member's kubelet would stop the pod.
	require.NoError(t, agent.remove(ctx))

	// An agent's object left in the member (another federation's agent, or
	// an unjoin that could not reach it): join refuses before it creates
	// anything.
	_, err = member.CoreV1().ConfigMaps(namespace).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "federation-agent-ca"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	out, err = u.Kubefed("join", "cluster1", "--context=fed", "--cluster-context=cluster1", "--connection=agent", "--agent-image="+ref)
	require.Error(t, err, out)
	assert.Contains(t, out, "holds an agent's objects already (ConfigMap/federation-agent-ca)")
	assert.NotContains(t, kubectl("get", "clusters"), "cluster1")
	_, err = member.CoreV1().ServiceAccounts(namespace).Get(ctx, "federation-fed", metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "no join account made: %v", err)
	require.NoError(t, member.CoreV1().ConfigMaps(namespace).Delete(ctx, "federation-agent-ca", metav1.DeleteOptions{}))

	// The member's admin, with no federation credential, registers with
	// a token: kubefed register installs the same chart in the member, and
	// the cluster is used once the federation's admin accepts it.
	out = u.MustKubefed("token", "create", "cluster1", "--context=fed", "--server-address="+unreachable)
	line := regexp.MustCompile(`kubefed register .*`).FindString(out)
	require.NotEmpty(t, line, out)
	register := startKubefed(t, u, append(strings.Fields(line)[1:], "--cluster-context=cluster1", "--agent-image="+ref,
		"--agent-values="+writeValues(t, map[string]any{"hostNetwork": true, "metrics": map[string]any{"port": metricsPort}}))...)
	objs = createdByJoin(t, member, register)
	agent = playWith(t, objs, kubeplay.Options{ServiceAccounts: accounts})
	out = agent.waitFor(register, 2*time.Minute)
	assert.Contains(t, out, "kubectl --context=cluster1 -n federation-system logs deployment/federation-agent")
	require.NoError(t, poll.Until(ctx, time.Minute, "cluster1's agent's pending certificate request", func(ctx context.Context) error {
		out, err := u.Kubefed("accept", "cluster1", "--context=fed")
		if err != nil {
			return fmt.Errorf("%v: %s", err, out)
		}
		return nil
	}))
	u.WaitClusterStatus("fed", time.Minute, map[string]string{"cluster1": "Ready"})
	_, err = k.RunWithInput(ctx, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: registered, namespace: default}\n", "--context=fed", "apply", "-f", "-")
	require.NoError(t, err)
	require.NoError(t, poll.Until(ctx, converge, "ConfigMap default/registered in cluster1, through the registered agent", func(ctx context.Context) error {
		_, err := member.CoreV1().ConfigMaps("default").Get(ctx, "registered", metav1.GetOptions{})
		return err
	}))
	agent.requireAllUp()
	t.Logf("from the join's end to here %s; the whole test took %s", time.Since(joined).Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
}

// createdByJoin waits until join (or register) has created the agent's
// Deployment in the member, and returns it with the Secrets and ConfigMaps
// its pod mounts: what a kubelet would run. join fails the test if it ends
// before, register if it fails.
func createdByJoin(t *testing.T, member kubernetes.Interface, join *background) []runtime.Object {
	t.Helper()
	var objs []runtime.Object
	err := poll.Until(context.Background(), 2*time.Minute, "the agent's Deployment in cluster1", func(ctx context.Context) error {
		select {
		case <-join.exited:
			// join waits for the agent (which podman has not run yet);
			// register is done once the agent is installed.
			if join.err != nil || join.cmd.Args[1] == "join" {
				return poll.Abort(fmt.Errorf("kubefed %s ended (%v):\n%s", join.cmd.Args[1], join.err, join.out.String()))
			}
		default:
		}
		d, err := member.AppsV1().Deployments(namespace).Get(ctx, "federation-agent", metav1.GetOptions{})
		if err != nil {
			return err
		}
		mounted, err := mountedObjects(ctx, member, []corev1.PodSpec{d.Spec.Template.Spec})
		if err != nil {
			return err
		}
		objs = append([]runtime.Object{d}, mounted...)
		return nil
	})
	require.NoError(t, err)
	return objs
}

// serviceAccounts gives the played pods what the member's kubelet would:
// a token of their service account (a TokenRequest), the member's CA as
// its kube-root-ca.crt ConfigMap publishes it, and its API server's
// address.
func serviceAccounts(t *testing.T, member kubernetes.Interface, server string) *kubeplay.ServiceAccounts {
	t.Helper()
	u, err := url.Parse(server)
	require.NoError(t, err)
	host, portText, err := net.SplitHostPort(u.Host)
	require.NoError(t, err)
	port, err := strconv.Atoi(portText)
	require.NoError(t, err)
	var ca string
	require.NoError(t, poll.Until(context.Background(), 30*time.Second, "the member's kube-root-ca.crt in "+namespace, func(ctx context.Context) error {
		cm, err := member.CoreV1().ConfigMaps(namespace).Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if ca = cm.Data["ca.crt"]; ca == "" {
			return errors.New("no ca.crt yet")
		}
		return nil
	}))
	return &kubeplay.ServiceAccounts{
		Token: func(ns, name string) ([]byte, error) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			tr, err := member.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{
				Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)},
			}, metav1.CreateOptions{})
			if err != nil {
				return nil, err
			}
			return []byte(tr.Status.Token), nil
		},
		CA: []byte(ca), Host: host, Port: port,
	}
}

// remove removes the plane's pods, as a node that lost them.
func (p *podmanPlane) remove(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	return p.player.Remove(ctx, p.plan.Prefix)
}
