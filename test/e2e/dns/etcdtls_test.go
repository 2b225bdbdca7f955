package dns_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/federation-v1/federation/test/fedenv"
	"github.com/federation-v1/federation/test/memberenv"
)

// TestEtcdServesOnlyCertifiedClients: the etcd federation-dns reads the
// records from (the apiserver's embedded one) refuses clients without a
// certificate of the plane's etcd CA, over TLS and over plain HTTP, while
// federation-dns, which has one, still answers a federated Service's name.
func TestEtcdServesOnlyCertifiedClients(t *testing.T) {
	ctx := context.Background()
	u := fedenv.NewUser(t, binDir)
	fedenv.WithMembers(t, u, memberenv.DefaultClusters(1, 1))
	out := u.InitFederation("federation", "--dns-provider=coredns", "--dns-zone-name=example.com.")
	m := regexp.MustCompile(`is answering at: (\S+)`).FindStringSubmatch(out)
	require.NotNil(t, m, out)
	server := m[1]
	u.MustKubefed("join", "cluster1", "--context=federation")
	u.WaitClusterStatus("federation", 30*time.Second, map[string]string{"cluster1": "Ready"})
	_, err := u.Kubectl().RunWithInput(ctx, nginx, "--context=federation", "apply", "-f", "-")
	require.NoError(t, err)
	// The load-balancer simulator gives cluster1's first Service 127.1.1.1.
	expect(t, server, map[string]answer{"nginx.default.federation.svc.example.com.": {ips: []string{"127.1.1.1"}}})

	plane := u.Plane("federation")
	require.NotNil(t, plane.DNS)
	require.Len(t, plane.DNS.EtcdEndpoints, 1)
	endpoint, err := url.Parse(plane.DNS.EtcdEndpoints[0])
	require.NoError(t, err)
	require.Equal(t, "https", endpoint.Scheme)
	// Trusting the etcd's serving certificate, so that only the missing
	// client certificate can be the reason for a refusal.
	caPEM, err := os.ReadFile(filepath.Join(u.PlaneDir("federation"), "pki", "etcd-ca.crt"))
	require.NoError(t, err)
	roots := x509.NewCertPool()
	require.True(t, roots.AppendCertsFromPEM(caPEM))

	t.Run("TLS without a client certificate", func(t *testing.T) {
		assert.ErrorContains(t, readOverTLS(endpoint.Host, &tls.Config{RootCAs: roots}), "certificate required")
		assert.Error(t, etcdGet(t, "https://"+endpoint.Host, &tls.Config{RootCAs: roots}), "no data without a certificate")
	})
	t.Run("plain HTTP", func(t *testing.T) {
		resp, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://" + endpoint.Host + "/v3/kv/range")
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "only the TLS server's complaint: %s", body)
			assert.Contains(t, string(body), "HTTPS server")
		}
		assert.Error(t, etcdGet(t, "http://"+endpoint.Host, nil), "no data over plain gRPC")
	})
	// Still answering: federation-dns reads etcd with its certificate.
	expect(t, server, map[string]answer{"nginx.default.federation.svc.example.com.": {ips: []string{"127.1.1.1"}}})
}

// readOverTLS completes a TLS handshake with addr and reads: with TLS 1.3
// a server that wants a client certificate says so at the first read.
func readOverTLS(addr string, cfg *tls.Config) error {
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, cfg)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := conn.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
		return err
	}
	_, err = conn.Read(make([]byte, 1))
	return err
}

// etcdGet reads the records' prefix as an etcd client would, giving up
// after a few seconds (a refused client retries until then).
func etcdGet(t *testing.T, endpoint string, cfg *tls.Config) error {
	client, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 5 * time.Second, TLS: cfg, Logger: zap.NewNop()})
	require.NoError(t, err)
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = client.Get(ctx, "/skydns/", clientv3.WithPrefix())
	return err
}
