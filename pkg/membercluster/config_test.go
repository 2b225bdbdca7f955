package membercluster

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
)

func cluster(addrs ...federationv1beta1.ServerAddressByClientCIDR) *federationv1beta1.Cluster {
	return &federationv1beta1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "c1"}, Spec: federationv1beta1.ClusterSpec{ServerAddressByClientCIDRs: addrs}}
}

func TestServerAddress(t *testing.T) {
	got, err := ServerAddress(cluster(
		federationv1beta1.ServerAddressByClientCIDR{ClientCIDR: "10.0.0.0/8", ServerAddress: "https://10.0.0.1"},
		federationv1beta1.ServerAddressByClientCIDR{ClientCIDR: "0.0.0.0/0", ServerAddress: "https://public:6443"},
	))
	require.NoError(t, err)
	assert.Equal(t, "https://public:6443", got, "the entry for every client wins")

	got, err = ServerAddress(cluster(federationv1beta1.ServerAddressByClientCIDR{ClientCIDR: "10.0.0.0/8", ServerAddress: "https://10.0.0.1"}))
	require.NoError(t, err)
	assert.Equal(t, "https://10.0.0.1", got)

	_, err = ServerAddress(cluster())
	assert.ErrorContains(t, err, "cluster c1 has no server address")
}

func TestRESTConfig(t *testing.T) {
	c := cluster(federationv1beta1.ServerAddressByClientCIDR{ClientCIDR: "0.0.0.0/0", ServerAddress: "https://127.0.0.1:6443"})
	secret := func(data map[string]string) *corev1.Secret {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "federation-system", Name: "c1-abcde"}, Data: map[string][]byte{}}
		for k, v := range data {
			s.Data[k] = []byte(v)
		}
		return s
	}

	cfg, err := RESTConfig(c, secret(map[string]string{TokenKey: "t0k3n", CAKey: "CA"}))
	require.NoError(t, err)
	assert.Equal(t, "https://127.0.0.1:6443", cfg.Host)
	assert.Equal(t, "t0k3n", cfg.BearerToken)
	assert.Equal(t, []byte("CA"), cfg.CAData)
	assert.Equal(t, RequestTimeout, cfg.Timeout)

	kubeconfig := `apiVersion: v1
kind: Config
clusters: [{name: m, cluster: {server: "https://elsewhere:1", insecure-skip-tls-verify: true}}]
users: [{name: m, user: {token: from-kubeconfig}}]
contexts: [{name: m, context: {cluster: m, user: m}}]
current-context: m
`
	cfg, err = RESTConfig(c, secret(map[string]string{KubeconfigKey: kubeconfig}))
	require.NoError(t, err)
	assert.Equal(t, "https://127.0.0.1:6443", cfg.Host, "the Cluster's address wins over the kubeconfig's")
	assert.Equal(t, "from-kubeconfig", cfg.BearerToken)

	_, err = RESTConfig(c, secret(map[string]string{"other": "x"}))
	assert.ErrorContains(t, err, `has neither "kubeconfig" nor "token"`)

	_, err = RESTConfig(c, secret(map[string]string{KubeconfigKey: "{not yaml"}))
	assert.ErrorContains(t, err, `key "kubeconfig"`)
}
