// Package agentcredential is how a federation agent gets and keeps its
// own identity at the federation, as a kubelet does at its cluster:
// FetchCA learns the federation's CA from a pin of it (kubeadm's
// --discovery-token-ca-cert-hash), and Start gets a client certificate
// with a bootstrap token (kubefed token create) and renews it with the
// certificate itself before it expires.
package agentcredential

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"

	certutil "k8s.io/client-go/util/cert"
)

// hashPrefix starts a pin: sha256 of a certificate's SubjectPublicKeyInfo,
// in hex, as kubeadm's.
const hashPrefix = "sha256:"

// Hash is the pin of cert: sha256:HEX of its SubjectPublicKeyInfo.
func Hash(cert *x509.Certificate) string {
	sum := sha256.Sum256(cert.RawSubjectPublicKeyInfo)
	return hashPrefix + hex.EncodeToString(sum[:])
}

// FetchCA connects to the federation apiserver at server (https://HOST[:PORT])
// without verifying it, finds in the certificate chain it presents the CA
// whose pin is caCertHash, verifies the server's certificate against that
// CA (and HOST), and returns the CA in PEM.
func FetchCA(ctx context.Context, server string, caCertHash string) ([]byte, error) {
	want := strings.ToLower(strings.TrimSpace(caCertHash))
	if !strings.HasPrefix(want, hashPrefix) || len(want) != len(hashPrefix)+2*sha256.Size {
		return nil, fmt.Errorf("--ca-cert-hash %q: want sha256: and 64 hex digits, as kubefed token create prints", caCertHash)
	}
	u, err := url.Parse(server)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("--federation %q: want https://HOST[:PORT]", server)
	}
	host, address := u.Hostname(), u.Host
	if u.Port() == "" {
		address = net.JoinHostPort(host, "443")
	}
	dialer := &tls.Dialer{Config: &tls.Config{
		// Verified below, against the pinned CA.
		InsecureSkipVerify: true,
		ServerName:         host,
		MinVersion:         tls.VersionTLS12,
	}}
	conn, err := dialer.DialContext(ctx, "tcp", address)
	if err != nil {
		return nil, fmt.Errorf("connecting to the federation at %s: %w", server, err)
	}
	defer conn.Close()
	chain := conn.(*tls.Conn).ConnectionState().PeerCertificates
	return pinnedCA(chain, host, want, server)
}

// pinnedCA finds the CA of pin in chain (the leaf first) and verifies the
// leaf against it for host.
func pinnedCA(chain []*x509.Certificate, host, pin, server string) ([]byte, error) {
	if len(chain) == 0 {
		return nil, fmt.Errorf("the federation at %s presented no certificate", server)
	}
	var ca *x509.Certificate
	var seen []string
	for _, c := range chain {
		h := Hash(c)
		seen = append(seen, fmt.Sprintf("%q %s", c.Subject.CommonName, h))
		if h == pin {
			ca = c
		}
	}
	if ca == nil {
		hint := ""
		if len(chain) == 1 {
			hint = "; it presents only its own certificate, without its CA: its serving certificate file must hold the CA after it"
		}
		return nil, fmt.Errorf("none of the certificates the federation at %s presents (%s) matches --ca-cert-hash %s%s: check the flag, or that %s is the federation",
			server, strings.Join(seen, ", "), pin, hint, server)
	}
	if !ca.IsCA {
		return nil, fmt.Errorf("--ca-cert-hash %s pins %q, which is not a CA certificate: pin the federation's CA", pin, ca.Subject.CommonName)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	intermediates := x509.NewCertPool()
	for _, c := range chain[1:] {
		intermediates.AddCert(c)
	}
	if _, err := chain[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: intermediates, DNSName: host}); err != nil {
		return nil, fmt.Errorf("the federation's certificate at %s is not one of the CA of --ca-cert-hash %s for %s: %w", server, pin, host, err)
	}
	pem, err := certutil.EncodeCertificates(ca)
	if err != nil {
		return nil, errors.Join(errors.New("encoding the federation's CA"), err)
	}
	return pem, nil
}

func pemBlock(kind string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der})
}
