package rbac_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/federation-v1/federation/pkg/poll"
)

// serviceAccountTokens: a ServiceAccount of the federation authenticates
// to it, as GitOps agents (Argo CD, Flux) are given one on any cluster,
// with stock kubectl: a TokenRequest (kubectl create token) and a legacy
// token Secret both act as system:serviceaccount:NS:NAME under the
// federation's RBAC, die with the account, never travel to a member, and
// no member accepts them.
func serviceAccountTokens(f *fixture) {
	ctx := context.Background()
	const account, secretName = "gitops", "gitops-token"
	user := "system:serviceaccount:" + team + ":" + account
	f.Kubectl("create", "serviceaccount", account, "-n", team)
	f.Apply(role(team, "gitops-reader", "get, list"))
	f.Apply(roleBinding(team, "gitops-reader", "Role", "gitops-reader", account))
	f.Kubectl("create", "configmap", "gitops-config", "-n", team, "--from-literal=k=v")

	// A token bound to a Pod is refused, naming the field: the federation
	// has none. One below kube-apiserver's 10 minutes too.
	_, err := f.as("fed", "create", "token", account, "-n", team, "--bound-object-kind=Pod", "--bound-object-name=p", "--bound-object-uid=1")
	f.refused("", err, "spec.boundObjectRef")
	_, err = f.as("fed", "create", "token", account, "-n", team, "--duration=5m")
	f.refused("", err, "spec.expirationSeconds")

	requested := strings.TrimSpace(f.Kubectl("create", "token", account, "-n", team, "--duration=1h"))
	require.NotEmpty(f.T, requested)
	f.addTokenUser("gitops-requested", requested)

	// The legacy way: a token Secret, filled by the federation.
	f.Apply(fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata:\n  name: %s\n  namespace: %s\n  annotations: {kubernetes.io/service-account.name: %s}\ntype: kubernetes.io/service-account-token\n", secretName, team, account))
	var legacy string
	require.NoError(f.T, poll.Until(ctx, converge, "the token Secret to be filled", func(ctx context.Context) error {
		s, err := f.fed().CoreV1().Secrets(team).Get(ctx, secretName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(s.Data[corev1.ServiceAccountTokenKey]) == 0 || len(s.Data[corev1.ServiceAccountRootCAKey]) == 0 || string(s.Data[corev1.ServiceAccountNamespaceKey]) != team {
			return fmt.Errorf("token, ca.crt, namespace: %d, %d, %q bytes", len(s.Data[corev1.ServiceAccountTokenKey]), len(s.Data[corev1.ServiceAccountRootCAKey]), s.Data[corev1.ServiceAccountNamespaceKey])
		}
		legacy = string(s.Data[corev1.ServiceAccountTokenKey])
		return nil
	}))
	f.addTokenUser("gitops-legacy", legacy)

	for _, ctxName := range []string{"gitops-requested", "gitops-legacy"} {
		// RBAC's informers see the new binding soon, not at once.
		f.waitCanI(ctxName, "yes", "get", "configmaps", "-n", team)
		out, err := f.as(ctxName, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username} {.status.userInfo.groups}")
		require.NoError(f.T, err, out)
		assert.Contains(f.T, out, user)
		assert.Contains(f.T, out, "system:serviceaccounts:"+team)
		out, err = f.as(ctxName, "get", "configmap", "gitops-config", "-n", team, "-o", "jsonpath={.data.k}")
		require.NoError(f.T, err, out)
		assert.Equal(f.T, "v", out)
		for _, args := range [][]string{{"get", "secrets", "-n", team}, {"get", "configmaps", "-n", "default"}, {"delete", "configmap", "gitops-config", "-n", team}} {
			out, err = f.as(ctxName, args...)
			f.refused(out, err, "is forbidden: User \""+user+"\"")
		}
	}

	// Never in a member: the ConfigMap made after the Secret reached them
	// all, the Secret none.
	for _, cluster := range members {
		require.NoError(f.T, poll.Until(ctx, converge, "the ConfigMap in "+cluster, func(ctx context.Context) error {
			_, err := f.member(cluster).CoreV1().ConfigMaps(team).Get(ctx, "gitops-config", metav1.GetOptions{})
			return err
		}))
		_, err := f.member(cluster).CoreV1().Secrets(team).Get(ctx, secretName, metav1.GetOptions{})
		assert.True(f.T, apierrors.IsNotFound(err), "the token Secret in %s: %v", cluster, err)
		// A member's kube-apiserver refuses the federation's tokens: its
		// key is not the federation's.
		for _, token := range []string{requested, legacy} {
			_, err := f.memberWithToken(cluster, token).CoreV1().ConfigMaps(team).List(ctx, metav1.ListOptions{})
			assert.True(f.T, apierrors.IsUnauthorized(err), "%s accepted a federation token: %v", cluster, err)
		}
	}

	// Deleting the account invalidates both (and the tokens controller
	// deletes the Secret).
	f.Kubectl("delete", "serviceaccount", account, "-n", team)
	for _, token := range []string{requested, legacy} {
		require.NoError(f.T, poll.Until(ctx, converge, "the deleted account's token to be refused", func(ctx context.Context) error {
			_, err := f.fedWithToken(token).CoreV1().ConfigMaps(team).List(ctx, metav1.ListOptions{})
			if !apierrors.IsUnauthorized(err) {
				return fmt.Errorf("not 401: %v", err)
			}
			return nil
		}))
	}
}

// addTokenUser adds a kubeconfig context named name in which the
// federation is called with token only.
func (f *fixture) addTokenUser(name, token string) {
	f.T.Helper()
	cfg, err := clientcmd.LoadFromFile(f.User.Kubeconfig)
	require.NoError(f.T, err)
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: cfg.Contexts["fed"].Cluster, AuthInfo: name}
	require.NoError(f.T, clientcmd.WriteToFile(*cfg, f.User.Kubeconfig))
}

// fed is the federation admin's client.
func (f *fixture) fed() kubernetes.Interface {
	f.T.Helper()
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: f.User.Kubeconfig}, &clientcmd.ConfigOverrides{CurrentContext: "fed"}).ClientConfig()
	require.NoError(f.T, err)
	c, err := kubernetes.NewForConfig(cfg)
	require.NoError(f.T, err)
	return c
}

// fedWithToken calls the federation with token and no other credential.
func (f *fixture) fedWithToken(token string) kubernetes.Interface {
	f.T.Helper()
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: f.User.Kubeconfig}, &clientcmd.ConfigOverrides{CurrentContext: "fed"}).ClientConfig()
	require.NoError(f.T, err)
	return withToken(f, cfg, token)
}

// memberWithToken calls a member's kube-apiserver with token only.
func (f *fixture) memberWithToken(cluster, token string) kubernetes.Interface {
	f.T.Helper()
	cfg, err := f.env.RESTConfig(cluster)
	require.NoError(f.T, err)
	return withToken(f, cfg, token)
}

func withToken(f *fixture, cfg *rest.Config, token string) kubernetes.Interface {
	anon := rest.AnonymousClientConfig(cfg)
	anon.BearerToken = token
	c, err := kubernetes.NewForConfig(anon)
	require.NoError(f.T, err)
	return c
}
