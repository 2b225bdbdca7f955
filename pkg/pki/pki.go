// Package pki issues the credentials a control plane (local, in a host
// cluster) or test environment needs: a self-signed CA, serving
// certificates for loopback and given hosts, client certificates whose CN
// and O Kubernetes reads as user and groups, kubeconfigs embedding them,
// and the key that seals Secrets at rest.
package pki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"net"
	"time"

	"k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
)

// validity of every certificate issued here: long-lived, for local use.
const validity = 10 * 365 * 24 * time.Hour

// CA is a certificate authority whose key is at hand.
type CA struct {
	Cert *x509.Certificate
	Key  crypto.Signer
}

// NewCA creates a self-signed CA.
func NewCA(commonName string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	c, err := cert.NewSelfSignedCACert(cert.Config{CommonName: commonName}, key)
	if err != nil {
		return nil, fmt.Errorf("creating CA %q: %w", commonName, err)
	}
	return &CA{Cert: c, Key: key}, nil
}

// LoadCA reads a CA from PEM files.
func LoadCA(certPath, keyPath string) (*CA, error) {
	certs, err := cert.CertsFromFile(certPath)
	if err != nil {
		return nil, fmt.Errorf("reading CA certificate: %w", err)
	}
	key, err := keyutil.PrivateKeyFromFile(keyPath)
	if err != nil {
		return nil, fmt.Errorf("reading CA key: %w", err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("CA key %s cannot sign", keyPath)
	}
	return &CA{Cert: certs[0], Key: signer}, nil
}

// CertPEM is the CA certificate in PEM, as kubeconfigs embed it.
func (ca *CA) CertPEM() []byte {
	return pemCert(ca.Cert)
}

// WriteFiles writes the CA certificate and key as PEM files.
func (ca *CA) WriteFiles(certPath, keyPath string) error {
	return writeCertKey(certPath, keyPath, ca.Cert, ca.Key)
}

// IssueServing writes a serving certificate valid for loopback, localhost and
// hosts (IP addresses or DNS names).
func (ca *CA) IssueServing(certPath, keyPath, commonName string, hosts ...string) error {
	return ca.issue(certPath, keyPath, servingTemplate(commonName, hosts, x509.ExtKeyUsageServerAuth))
}

// IssuePeer writes a certificate that both serves (as IssueServing) and
// authenticates as a client, as the members of an etcd cluster use one
// --peer-cert-file for both ends of their connections.
func (ca *CA) IssuePeer(certPath, keyPath, commonName string, hosts ...string) error {
	return ca.issue(certPath, keyPath, servingTemplate(commonName, hosts, x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth))
}

func servingTemplate(commonName string, hosts []string, usages ...x509.ExtKeyUsage) x509.Certificate {
	tmpl := x509.Certificate{
		Subject:     pkix.Name{CommonName: commonName},
		ExtKeyUsage: usages,
		DNSNames:    []string{"localhost"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.IPv6loopback},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else if h != "" {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	return tmpl
}

// IssueClient writes a client certificate for user in groups.
func (ca *CA) IssueClient(certPath, keyPath, user string, groups ...string) error {
	return ca.issue(certPath, keyPath, x509.Certificate{
		Subject:     pkix.Name{CommonName: user, Organization: groups},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
}

func (ca *CA) issue(certPath, keyPath string, tmpl x509.Certificate) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return err
	}
	tmpl.SerialNumber = serial
	tmpl.NotBefore = time.Now().Add(-time.Hour)
	tmpl.NotAfter = time.Now().Add(validity)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment
	der, err := x509.CreateCertificate(rand.Reader, &tmpl, ca.Cert, key.Public(), ca.Key)
	if err != nil {
		return fmt.Errorf("signing certificate for %q: %w", tmpl.Subject.CommonName, err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		return err
	}
	return writeCertKey(certPath, keyPath, c, key)
}

func pemCert(c *x509.Certificate) []byte {
	b, _ := cert.EncodeCertificates(c) // encoding a parsed certificate cannot fail
	return b
}

func writeCertKey(certPath, keyPath string, c *x509.Certificate, key crypto.Signer) error {
	keyPEM, err := keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		return err
	}
	if err := cert.WriteCert(certPath, pemCert(c)); err != nil {
		return err
	}
	return keyutil.WriteKey(keyPath, keyPEM)
}

// WriteServiceAccountKey writes a new private key for signing service-account tokens.
func WriteServiceAccountKey(path string) error {
	key, err := keyutil.MakeEllipticPrivateKeyPEM()
	if err != nil {
		return err
	}
	return keyutil.WriteKey(path, key)
}
