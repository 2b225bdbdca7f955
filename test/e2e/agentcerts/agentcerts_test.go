package agentcerts_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"

	"github.com/federation-v1/federation/pkg/agentcredential"
	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/generated/clientset/versioned"
	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/test/fedenv"
)

const fed = "fed"

// registerLine is the command kubefed token create prints.
var registerLine = regexp.MustCompile(`(?m)^kubefed register (\S+) --federation=(\S+) (?:--\S+ )*--token=(\S+) --ca-cert-hash=(\S+) --cluster-context=(\S+)$`)

// token runs kubefed token create and returns the federation's address,
// the token and the CA pin it printed.
func token(t *testing.T, u *fedenv.User, cluster string, flags ...string) (server, tok, pin string) {
	t.Helper()
	out := u.MustKubefed(append([]string{"token", "create", cluster, "--context=" + fed}, flags...)...)
	m := registerLine.FindStringSubmatch(out)
	require.NotNil(t, m, "no kubefed register command in:\n%s", out)
	assert.Equal(t, cluster, m[1])
	assert.Equal(t, cluster, m[5])
	assert.Contains(t, out, m[3], "the token is printed")
	return m[2], m[3], m[4]
}

// agentClient makes requests with the credential's current certificate,
// each on a new connection.
func agentClient(cred *agentcredential.Credential) *http.Client {
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: cred.TLSClientConfig(), DisableKeepAlives: true}}
}

func get(t *testing.T, c *http.Client, url string) (int, string) {
	t.Helper()
	resp, err := c.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// start starts a credential in a new folder; it is stopped when the test
// t (the whole test, for one used across subtests) ends.
func start(ctx context.Context, t *testing.T, server string, ca []byte, tok, cluster string, timeout time.Duration) (*agentcredential.Credential, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cred, err := agentcredential.Start(ctx, agentcredential.Config{Server: server, CAData: ca, BootstrapToken: tok, Cluster: cluster, Dir: filepath.Join(t.TempDir(), "agent")})
	if err == nil {
		t.Cleanup(cred.Stop)
	}
	return cred, err
}

func TestAgentCertificates(t *testing.T) {
	ctx := context.Background()
	u := fedenv.NewUser(t, binDir)
	u.InitFederation(fed)
	// Agents' certificates last a minute here, so that renewal is seen.
	u.RestartControllerManager(fed, "--agent-certificate-duration=1m")
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(&clientcmd.ClientConfigLoadingRules{ExplicitPath: u.Kubeconfig},
		&clientcmd.ConfigOverrides{CurrentContext: fed}).ClientConfig()
	require.NoError(t, err)
	admin := kubernetes.NewForConfigOrDie(cfg)
	fedClient := versioned.NewForConfigOrDie(cfg)
	tokens := func(cluster string) []string {
		list, err := admin.CoreV1().Secrets(federationv1beta1.SystemNamespace).List(ctx, metav1.ListOptions{LabelSelector: federationv1beta1.AgentClusterLabel + "=" + cluster})
		require.NoError(t, err)
		var names []string
		for _, s := range list.Items {
			names = append(names, s.Name)
		}
		return names
	}

	server, tok, pin := token(t, u, "edge1", "--auto-accept")
	ca, err := agentcredential.FetchCA(ctx, server, pin)
	require.NoError(t, err, "the pinned CA from the federation's chain")
	cluster, err := fedClient.FederationV1beta1().Clusters().Get(ctx, "edge1", metav1.GetOptions{})
	require.NoError(t, err, "token create makes the Cluster")
	assert.Equal(t, federationv1beta1.ConnectionAgent, cluster.Spec.Connection)
	assert.Equal(t, "https://edge1.agent.invalid", cluster.Spec.ServerAddressByClientCIDRs[0].ServerAddress)
	secretsList, err := admin.CoreV1().Secrets(federationv1beta1.SystemNamespace).List(ctx, metav1.ListOptions{LabelSelector: federationv1beta1.AgentClusterLabel + "=edge1"})
	require.NoError(t, err)
	require.Len(t, secretsList.Items, 1)
	assert.Equal(t, bootstrapapi.SecretTypeBootstrapToken, secretsList.Items[0].Type)
	assert.Equal(t, "true", string(secretsList.Items[0].Data[federationv1beta1.AgentAutoAcceptKey]))

	var cred *agentcredential.Credential
	whole := t
	t.Run("an auto-accepted token gets the agent its certificate", func(t *testing.T) {
		began := time.Now()
		cred, err = start(ctx, whole, server, ca, tok, "edge1", 2*time.Minute)
		require.NoError(t, err)
		t.Logf("certificate in %s", time.Since(began))
		cert := cred.Certificate()
		require.NotNil(t, cert)
		assert.Equal(t, "system:federation:agent:edge1", cert.Subject.CommonName)
		assert.Equal(t, []string{"system:federation:agents"}, cert.Subject.Organization)
		assert.Empty(t, tokens("edge1"), "the token is single use: deleted")
	})
	require.NotNil(t, cred)

	t.Run("the agent's identity may do nothing but its tunnel and its certificate", func(t *testing.T) {
		c := agentClient(cred)
		for _, path := range []string{
			"/apis/federation/v1beta1/clusters",
			"/apis/federation/v1beta1/clusters/edge1",
			"/api/v1/namespaces/federation-system/secrets",
			"/api/v1/namespaces/federation-system/secrets/bootstrap-token-abcdef",
			"/api/v1/configmaps",
			"/apis/certificates.k8s.io/v1/certificatesigningrequests",
			"/apis/federation/v1beta1/clusters/edge2/tunnel",
		} {
			status, body := get(t, c, server+path)
			assert.Equal(t, http.StatusForbidden, status, "%s: %s", path, body)
			assert.Contains(t, body, `User \"system:federation:agent:edge1\"`, "authenticated as the agent: %s", path)
		}
	})

	t.Run("a used token is refused, with what to do", func(t *testing.T) {
		_, err := start(ctx, t, server, ca, tok, "edge1", 30*time.Second)
		require.ErrorIs(t, err, agentcredential.ErrTokenRefused)
		assert.ErrorContains(t, err, "the bootstrap token was refused: it is unknown, expired or already used; ask the federation's admin for a new one (kubefed token create edge1)")
	})

	t.Run("a token for one cluster gets no certificate of another", func(t *testing.T) {
		server, tok, _ := token(t, u, "edge2", "--auto-accept")
		_, err := start(ctx, t, server, ca, tok, "edge3", time.Minute)
		require.ErrorIs(t, err, agentcredential.ErrDenied)
		assert.ErrorContains(t, err, `bootstrap token "`+tok[:6]+`" is for cluster "edge2", not for cluster "edge3"`)
		assert.Len(t, tokens("edge2"), 1, "the token stays for its own cluster")
	})

	t.Run("without auto-accept the request waits for kubefed accept", func(t *testing.T) {
		out, err := u.Kubefed("accept", "edge4", "--context="+fed)
		require.Error(t, err)
		assert.Contains(t, out, `cluster "edge4" has no pending certificate request to accept`)

		server, tok, _ := token(t, u, "edge4")
		_, err = start(ctx, t, server, ca, tok, "edge4", 5*time.Second)
		require.ErrorIs(t, err, agentcredential.ErrNotAccepted)
		assert.ErrorContains(t, err, "waiting for the federation's admin to accept cluster edge4 (kubefed accept edge4)")

		type result struct {
			cred *agentcredential.Credential
			err  error
		}
		done := make(chan result, 1)
		go func() {
			c, err := start(ctx, t, server, ca, tok, "edge4", 2*time.Minute)
			done <- result{c, err}
		}()
		// Two pending requests: the one given up on, and the one waiting.
		require.NoError(t, poll.Until(ctx, time.Minute, "two pending certificate requests of edge4", func(ctx context.Context) error {
			list, err := admin.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{})
			if err != nil {
				return err
			}
			pending := 0
			for _, csr := range list.Items {
				if strings.HasPrefix(csr.Name, "agent-edge4-") && len(csr.Status.Conditions) == 0 {
					pending++
				}
			}
			if pending < 2 {
				return fmt.Errorf("%d pending", pending)
			}
			return nil
		}))
		out = u.MustKubefed("accept", "edge4", "--context="+fed)
		assert.Contains(t, out, `Accepted cluster "edge4"`)
		assert.Contains(t, out, "Denied the older request(s) of the same token")
		r := <-done
		require.NoError(t, r.err, "the newest request, the waiting agent's, is approved")
		assert.Equal(t, "system:federation:agent:edge4", r.cred.Certificate().Subject.CommonName)
		assert.Empty(t, tokens("edge4"), "accept deletes the token")
		// One token, one certificate: the request given up on is denied.
		list, err := admin.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		var approvedN, superseded int
		for _, csr := range list.Items {
			if !strings.HasPrefix(csr.Name, "agent-edge4-") {
				continue
			}
			if approved(&csr) {
				approvedN++
			}
			for _, c := range csr.Status.Conditions {
				if c.Type == certificatesv1.CertificateDenied && c.Reason == "Superseded" {
					superseded++
				}
			}
		}
		assert.Equal(t, 1, approvedN, "one request of the token approved")
		assert.GreaterOrEqual(t, superseded, 1, "the older requests of the token denied")
	})

	t.Run("an expired token is refused", func(t *testing.T) {
		server, tok, _ := token(t, u, "edge5", "--ttl=1s")
		expired := time.Now().Add(2 * time.Second)
		require.NoError(t, poll.Until(ctx, 30*time.Second, "the token to expire and be refused", func(ctx context.Context) error {
			if time.Now().Before(expired) {
				return errors.New("not expired yet")
			}
			_, err := start(ctx, t, server, ca, tok, "edge5", 5*time.Second)
			if !errors.Is(err, agentcredential.ErrTokenRefused) {
				return fmt.Errorf("not refused: %v", err)
			}
			return nil
		}))
	})

	t.Run("the agent renews its certificate with itself", func(t *testing.T) {
		first := cred.Certificate()
		lifetime := first.NotAfter.Sub(first.NotBefore)
		assert.Less(t, lifetime, 2*time.Minute, "--agent-certificate-duration=1m")
		require.NoError(t, poll.Until(ctx, 3*time.Minute, "a renewed certificate of edge1", func(context.Context) error {
			cur := cred.Certificate()
			if cur == nil {
				return errors.New("no current certificate: the first one expired unrenewed")
			}
			if cur.SerialNumber.Cmp(first.SerialNumber) == 0 {
				return fmt.Errorf("still the certificate of serial %s, valid until %s", cur.SerialNumber, cur.NotAfter)
			}
			return nil
		}))
		renewed := cred.Certificate()
		assert.Equal(t, "system:federation:agent:edge1", renewed.Subject.CommonName)
		assert.True(t, renewed.NotAfter.After(first.NotAfter))
		status, body := get(t, agentClient(cred), server+"/apis/federation/v1beta1/clusters")
		assert.Equal(t, http.StatusForbidden, status, body)
		assert.Contains(t, body, `User \"system:federation:agent:edge1\"`, "the renewed certificate authenticates")
		list, err := admin.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		renewals := 0
		for _, csr := range list.Items {
			if csr.Spec.Username == "system:federation:agent:edge1" && approved(&csr) {
				renewals++
			}
		}
		assert.Positive(t, renewals, "a request of the agent itself, approved")
	})
}

func approved(csr *certificatesv1.CertificateSigningRequest) bool {
	for _, c := range csr.Status.Conditions {
		if c.Type == certificatesv1.CertificateApproved {
			return true
		}
	}
	return false
}
