package membercluster

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/pki"
)

func cluster(addrs ...federationv1beta1.ServerAddressByClientCIDR) *federationv1beta1.Cluster {
	return &federationv1beta1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "c1"}, Spec: federationv1beta1.ClusterSpec{ServerAddressByClientCIDRs: addrs}}
}

func secret(data map[string]string) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "federation-system", Name: "c1-abcde"}, Data: map[string][]byte{}}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	return s
}

// testCerts are a CA and a client certificate and key it issued, as PEM.
type testCerts struct{ ca, cert, key string }

func newTestCerts(t *testing.T) testCerts {
	t.Helper()
	ca, err := pki.NewCA("member-ca")
	require.NoError(t, err)
	dir := t.TempDir()
	certPath, keyPath := filepath.Join(dir, "c.crt"), filepath.Join(dir, "c.key")
	require.NoError(t, ca.IssueClient(certPath, keyPath, "federation"))
	cert, err := os.ReadFile(certPath)
	require.NoError(t, err)
	key, err := os.ReadFile(keyPath)
	require.NoError(t, err)
	return testCerts{ca: string(ca.CertPEM()), cert: string(cert), key: string(key)}
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

// kubeconfig is a kubeconfig whose current context uses cluster and user,
// each given as the YAML of a flow mapping's body.
func kubeconfig(cluster, user string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: m, cluster: {server: "https://elsewhere:1", %s}}]
users: [{name: m, user: {%s}}]
contexts: [{name: m, context: {cluster: m, user: m}}]
current-context: m
`, cluster, user)
}

func TestRESTConfig(t *testing.T) {
	c := cluster(federationv1beta1.ServerAddressByClientCIDR{ClientCIDR: "0.0.0.0/0", ServerAddress: "https://127.0.0.1:6443"})
	certs := newTestCerts(t)

	t.Run("token and CA", func(t *testing.T) {
		cfg, err := RESTConfig(c, secret(map[string]string{TokenKey: "t0k3n\n", CAKey: certs.ca}))
		require.NoError(t, err)
		assert.Equal(t, "https://127.0.0.1:6443", cfg.Host)
		assert.Equal(t, "t0k3n", cfg.BearerToken, "a file's final line break is not part of the token")
		assert.Equal(t, []byte(certs.ca), cfg.CAData)
		assert.Equal(t, RequestTimeout, cfg.Timeout)
	})

	t.Run("client certificate and CA", func(t *testing.T) {
		cfg, err := RESTConfig(c, secret(map[string]string{CertKey: certs.cert, KeyKey: certs.key, CAKey: certs.ca}))
		require.NoError(t, err)
		assert.Equal(t, []byte(certs.cert), cfg.CertData)
		assert.Equal(t, []byte(certs.key), cfg.KeyData)
		assert.Empty(t, cfg.BearerToken)
	})

	t.Run("kubeconfig with inline data", func(t *testing.T) {
		ca := "certificate-authority-data: " + b64(certs.ca) + ", tls-server-name: member.example"
		cfg, err := RESTConfig(c, secret(map[string]string{KubeconfigKey: kubeconfig(ca, "token: from-kubeconfig")}))
		require.NoError(t, err)
		assert.Equal(t, "https://127.0.0.1:6443", cfg.Host, "the Cluster's address wins over the kubeconfig's")
		assert.Equal(t, "from-kubeconfig", cfg.BearerToken)
		assert.Equal(t, []byte(certs.ca), cfg.CAData)
		assert.Equal(t, "member.example", cfg.ServerName)

		user := "client-certificate-data: " + b64(certs.cert) + ", client-key-data: " + b64(certs.key)
		cfg, err = RESTConfig(c, secret(map[string]string{KubeconfigKey: kubeconfig(ca, user)}))
		require.NoError(t, err)
		assert.Equal(t, []byte(certs.cert), cfg.CertData)
		assert.Equal(t, []byte(certs.key), cfg.KeyData)
	})

	t.Run("not credentials", func(t *testing.T) {
		for name, tc := range map[string]struct {
			data map[string]string
			want string
		}{
			"no known key":        {map[string]string{"other": "x"}, `none of the keys "token", "tls.crt" or "tls.key" and "kubeconfig"`},
			"kubeconfig not YAML": {map[string]string{KubeconfigKey: "{not yaml"}, `key "kubeconfig": does not parse`},
			"no current context":  {map[string]string{KubeconfigKey: strings.Replace(kubeconfig("", "token: t"), "current-context: m", "", 1)}, `current-context "" names no context`},
			"unknown user":        {map[string]string{KubeconfigKey: strings.Replace(kubeconfig("", "token: t"), "user: m}", "user: x}", 1)}, `names user "x"`},
			"unknown cluster":     {map[string]string{KubeconfigKey: strings.Replace(kubeconfig("", "token: t"), "cluster: m,", "cluster: x,", 1)}, `names cluster "x"`},
			"user without data":   {map[string]string{KubeconfigKey: kubeconfig("", "")}, "neither a token nor a client certificate"},
			"certificate only":    {map[string]string{CertKey: certs.cert}, `needs both "tls.crt" and "tls.key"`},
			"key only":            {map[string]string{KeyKey: certs.key}, `needs both "tls.crt" and "tls.key"`},
			"mismatched pair":     {map[string]string{CertKey: certs.cert, KeyKey: newTestCerts(t).key}, "do not make a pair"},
			"CA not PEM":          {map[string]string{TokenKey: "t", CAKey: "CA"}, `"ca.crt" holds no PEM certificate`},
			"token with a header": {map[string]string{TokenKey: "t\r\nX-Evil: 1"}, "line break"},
		} {
			t.Run(name, func(t *testing.T) {
				cfg, err := RESTConfig(c, secret(tc.data))
				require.Error(t, err)
				assert.Nil(t, cfg)
				assert.Contains(t, err.Error(), tc.want)
				assert.Contains(t, err.Error(), "cluster c1: credentials Secret federation-system/c1-abcde refused")
				require.NotNil(t, Refused(err))
				assert.Equal(t, ReasonInvalidCredentials, Refused(err).Reason)
			})
		}
	})

	t.Run("address checked again", func(t *testing.T) {
		for _, addr := range []string{"http://127.0.0.1:6443", "https://127.0.0.1:6443/any/path", "127.0.0.1:6443"} {
			bad := cluster(federationv1beta1.ServerAddressByClientCIDR{ClientCIDR: "0.0.0.0/0", ServerAddress: addr})
			cfg, err := RESTConfig(bad, secret(map[string]string{TokenKey: "t"}))
			require.Error(t, err, addr)
			assert.Nil(t, cfg)
			assert.Contains(t, err.Error(), "serverAddress")
			require.NotNil(t, Refused(err))
			assert.Equal(t, ReasonInvalidServerAddress, Refused(err).Reason)
		}
	})
}

func b64(s string) string {
	return base64.StdEncoding.EncodeToString([]byte(s))
}

// TestRESTConfigRefusesCode checks that a kubeconfig's fields that run a
// command, read a file, or weaken or redirect the connection are refused
// by name, and that nothing of them happened.
func TestRESTConfigRefusesCode(t *testing.T) {
	c := cluster(federationv1beta1.ServerAddressByClientCIDR{ClientCIDR: "0.0.0.0/0", ServerAddress: "https://127.0.0.1:6443"})
	dir := t.TempDir()
	marker := filepath.Join(dir, "marker")
	tokenFile := filepath.Join(dir, "token")
	require.NoError(t, os.WriteFile(tokenFile, []byte("host-secret"), 0o600))
	exec := fmt.Sprintf(`exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/sh, args: ["-c", "touch %s"], interactiveMode: Never}`, marker)

	cases := []struct{ cluster, user, field string }{
		{user: exec, field: "exec"},
		{user: "token: t, " + exec, field: "exec"},
		{user: `auth-provider: {name: oidc, config: {id-token: x}}`, field: "auth-provider"},
		{user: "tokenFile: " + tokenFile, field: "tokenFile"},
		{user: "token: t, tokenFile: " + tokenFile, field: "tokenFile"},
		{user: "client-certificate: /etc/client.crt, client-key: /etc/client.key", field: "client-certificate client-key"},
		{user: "token: t, client-key: /etc/client.key", field: "client-key"},
		{user: "username: admin, password: secret", field: "password username"},
		{user: "token: t, as: system:admin", field: "as"},
		{user: "token: t, as-groups: [system:masters]", field: "as-groups"},
		{user: "token: t, as-uid: '0'", field: "as-uid"},
		{user: "token: t, as-user-extra: {a: [b]}", field: "as-user-extra"},
		{cluster: "certificate-authority: /etc/ca.crt", user: "token: t", field: "certificate-authority"},
		{cluster: "insecure-skip-tls-verify: true", user: "token: t", field: "insecure-skip-tls-verify"},
		{cluster: "proxy-url: http://proxy.example:3128", user: "token: t", field: "proxy-url"},
	}
	for _, tc := range cases {
		t.Run(tc.field, func(t *testing.T) {
			cfg, err := RESTConfig(c, secret(map[string]string{KubeconfigKey: kubeconfig(tc.cluster, tc.user)}))
			require.Error(t, err)
			assert.Nil(t, cfg)
			assert.Contains(t, err.Error(), fmt.Sprintf("sets [%s]: refused", tc.field))
			assert.NotContains(t, err.Error(), "host-secret")
			require.NotNil(t, Refused(err))
			assert.Equal(t, ReasonInvalidCredentials, Refused(err).Reason)
			assert.NoFileExists(t, marker, "the exec plugin ran")
		})
	}

	t.Run("only the current context counts", func(t *testing.T) {
		other := kubeconfig("", "token: t") + "\n"
		other = strings.Replace(other, "users: [{name: m, user: {token: t}}]",
			"users: [{name: m, user: {token: t}}, {name: evil, user: {"+exec+"}}]", 1)
		cfg, err := RESTConfig(c, secret(map[string]string{KubeconfigKey: other}))
		require.NoError(t, err)
		assert.Equal(t, "t", cfg.BearerToken)
		assert.Nil(t, cfg.ExecProvider)
		assert.NoFileExists(t, marker)
	})
}
