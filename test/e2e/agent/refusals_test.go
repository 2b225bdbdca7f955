package agent_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/pkg/processplane"
	"github.com/federation-v1/federation/pkg/tunnel/wire"
	"github.com/federation-v1/federation/test/fedenv"
)

// refusals: what a tenant, an agent's own credential and a stale token
// try, and the federation refuses. Each step fails if its hole reopens.
func refusals(t *testing.T, u *fedenv.User, f fedenv.Fixture) {
	ctx := context.Background()
	f.Kubectl("create", "namespace", "team-a")
	f.Kubectl("create", "rolebinding", "tenant-edit", "--clusterrole=edit", "--user=tenant", "--namespace=team-a")
	u.AddUser("fed", "tenant")
	tunnel2 := "/apis/federation/v1beta1/clusters/cluster2/tunnel"
	proxy2 := "/apis/federation/v1beta1/clusters/cluster2/proxy/api/v1/namespaces"

	t.Run("a tenant opens no tunnel, reaches no member through one, and mints no token", func(t *testing.T) {
		for _, path := range []string{tunnel2, proxy2} {
			out, err := u.Kubectl().Run(ctx, "--context=tenant", "get", "--raw", path)
			require.Error(t, err, path)
			assert.Contains(t, out+err.Error(), "Forbidden", path)
		}
		out, err := u.Kubefed("token", "create", "cluster9", "--context=tenant")
		require.Error(t, err)
		assert.Contains(t, out, "forbidden")
	})

	agent := agentClient(t, u, "cluster2")
	t.Run("an agent's credential opens only its own tunnel and reads nothing", func(t *testing.T) {
		for _, path := range []string{
			"/apis/federation/v1beta1/clusters/cluster1/tunnel", // another cluster's tunnel
			proxy2,                                  // the proxy is the federation's, not the agent's
			"/apis/federation/v1beta1/clusters",     // the clusters
			"/api/v1/namespaces/default/configmaps", // anything else
			"/api/v1/namespaces/federation-system/secrets",
		} {
			err := agent.Discovery().RESTClient().Get().AbsPath(path).Do(ctx).Error()
			assert.True(t, apierrors.IsForbidden(err), "%s: %v", path, err)
		}
	})

	t.Run("an agent's credential sends its tunnel nothing but what agents send", func(t *testing.T) {
		// A compromised member holds its agent's key: its messages are read
		// by the apiserver before the tunnel library buffers them.
		// The real agent stopped (the attacker controls the member), so
		// that only the apiserver closes the attacker's tunnel.
		plane, agent := u.Plane("fed"), processplane.AgentInstance("cluster2")
		require.NoError(t, plane.Kill(agent))
		pem := filepath.Join(plane.AgentDir("cluster2"), "pki", "federation-agent-client-current.pem")
		for name, msg := range map[string][]byte{
			// remotedialer's peer messages grow state as long as the
			// tunnel lasts.
			"SyncConnections": tunnelMessage(8, bytes.Repeat([]byte{0x7f}, 64<<10)),
			"AddClient":       tunnelMessage(4, []byte("peer/1")),
			// remotedialer reads a whole message into memory.
			"a 4 MiB message": tunnelMessage(1, bytes.Repeat([]byte("x"), 4<<20)),
		} {
			ws := dialTunnel(t, u, pem, "cluster2")
			_ = ws.WriteMessage(websocket.BinaryMessage, msg)
			_ = ws.SetReadDeadline(time.Now().Add(10 * time.Second))
			var err error
			for err == nil {
				_, _, err = ws.ReadMessage()
			}
			var netErr net.Error
			assert.False(t, errors.As(err, &netErr) && netErr.Timeout(), "%s: the apiserver closes the tunnel at once: %v", name, err)
			_ = ws.Close()
		}
		require.NoError(t, plane.StartInstance(ctx, agent))
		u.WaitClusterStatus("fed", time.Minute, map[string]string{"cluster2": "Ready"})
	})

	t.Run("an agent's credential registers no second cluster", func(t *testing.T) {
		csr, err := agent.CertificatesV1().CertificateSigningRequests().Create(ctx, agentCSR(t, "cluster9"), metav1.CreateOptions{})
		require.NoError(t, err, "an agent may ask for certificates: its own renewals")
		require.NoError(t, poll.Until(ctx, 30*time.Second, "the request for cluster9 denied", func(ctx context.Context) error {
			conditions := f.Kubectl("get", "csr", csr.Name, "-o", "jsonpath={.status.conditions[*].type}")
			switch {
			case strings.Contains(conditions, "Approved"):
				return poll.Abort(fmt.Errorf("approved: %s", conditions))
			case strings.Contains(conditions, "Denied"):
				return nil
			}
			return fmt.Errorf("conditions %q", conditions)
		}))
	})

	t.Run("an agent's credential stores a bounded number of small certificate requests", func(t *testing.T) {
		big := agentCSRWith(t, "cluster9", 20<<10)
		_, err := agent.CertificatesV1().CertificateSigningRequests().Create(ctx, big, metav1.CreateOptions{})
		require.Error(t, err)
		assert.True(t, apierrors.IsInvalid(err), "a 20 KiB request: %v", err)
		var created int
		for range 30 { // bounded: the limit is 10 stored per agent
			if _, err = agent.CertificatesV1().CertificateSigningRequests().Create(ctx, agentCSR(t, "cluster9"), metav1.CreateOptions{}); err != nil {
				break
			}
			created++
		}
		require.Error(t, err, "no bound on an agent's stored requests")
		assert.True(t, apierrors.IsTooManyRequests(err), "%v", err)
		assert.Less(t, created, 10, "the agent had one stored already")
	})

	t.Run("an expired token is refused with a clear error", func(t *testing.T) {
		out := u.MustKubefed("token", "create", "cluster4", "--context=fed", "--ttl=1s")
		line := strings.Fields(regexpRegister.FindString(out))
		require.NotEmpty(t, line, out)
		require.NoError(t, poll.Until(ctx, 20*time.Second, "the token to expire", func(context.Context) error {
			out, err := u.Kubefed(append(line[1:], "--agent=local", "--data-dir="+t.TempDir())...)
			if err == nil || !strings.Contains(out, "unknown, expired or already used") {
				return fmt.Errorf("register: %v %s", err, out)
			}
			return nil
		}))
		// The Cluster token create made has no agent: not left for later steps.
		f.Kubectl("delete", "cluster", "cluster4")
	})
}

var regexpRegister = regexp.MustCompile(`kubefed register .*`)

// agentClient reaches the federation with the certificate the agent of
// cluster (a local agent of the plane) got for itself.
func agentClient(t *testing.T, u *fedenv.User, cluster string) kubernetes.Interface {
	t.Helper()
	return clientWithCertificate(t, u, filepath.Join(u.Plane("fed").AgentDir(cluster), "pki", "federation-agent-client-current.pem"))
}

// keepAgentCertificate copies the certificate of cluster's local agent out
// of the plane (unjoin removes it) and returns a client with it.
func keepAgentCertificate(t *testing.T, u *fedenv.User, cluster string) kubernetes.Interface {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(u.Plane("fed").AgentDir(cluster), "pki", "federation-agent-client-current.pem"))
	require.NoError(t, err)
	kept := filepath.Join(t.TempDir(), "agent.pem")
	require.NoError(t, os.WriteFile(kept, data, 0o600))
	return clientWithCertificate(t, u, kept)
}

func clientWithCertificate(t *testing.T, u *fedenv.User, pem string) kubernetes.Interface {
	client, err := kubernetes.NewForConfig(&rest.Config{Host: u.Plane("fed").Server, TLSClientConfig: rest.TLSClientConfig{
		CertFile: pem, KeyFile: pem, CAFile: filepath.Join(u.PlaneDir("fed"), "pki", "ca.crt")}})
	require.NoError(t, err)
	return client
}

// agentCSR asks for the client certificate of cluster's agent.
func agentCSR(t *testing.T, cluster string) *certificatesv1.CertificateSigningRequest {
	return agentCSRWith(t, cluster, 0)
}

// agentCSRWith is agentCSR padded with an extension of padding bytes: a
// well-formed request, only large.
func agentCSRWith(t *testing.T, cluster string, padding int) *certificatesv1.CertificateSigningRequest {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: "system:federation:agent:" + cluster, Organization: []string{"system:federation:agents"}},
	}
	if padding > 0 {
		tmpl.ExtraExtensions = []pkix.Extension{{Id: asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 99999, 1}, Value: make([]byte, padding)}}
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, tmpl, key)
	require.NoError(t, err)
	return &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "e2e-"},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
			SignerName: certificatesv1.KubeAPIServerClientSignerName,
			Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth},
		},
	}
}

// dialTunnel opens cluster's tunnel with the agent certificate in pem, as
// a new agent process would (its tunnel replaces the agent's).
func dialTunnel(t *testing.T, u *fedenv.User, pem, cluster string) *websocket.Conn {
	t.Helper()
	cert, err := tls.LoadX509KeyPair(pem, pem)
	require.NoError(t, err)
	ca, err := os.ReadFile(filepath.Join(u.PlaneDir("fed"), "pki", "ca.crt"))
	require.NoError(t, err)
	roots := x509.NewCertPool()
	require.True(t, roots.AppendCertsFromPEM(ca))
	dialer := websocket.Dialer{TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{cert}}, HandshakeTimeout: 10 * time.Second}
	url := "wss" + strings.TrimPrefix(u.Plane("fed").Server, "https") + wire.TunnelPath(cluster)
	ws, _, err := dialer.Dial(url, http.Header{wire.InstanceHeader: {"test"}, wire.RoleHeader: {wire.RolePrimary}})
	require.NoError(t, err)
	return ws
}

// tunnelMessage is a remotedialer message of type typ.
func tunnelMessage(typ int64, body []byte) []byte {
	var b []byte
	for _, v := range []int64{1, 0, typ} {
		b = binary.AppendVarint(b, v)
	}
	return append(b, body...)
}
