package memberenv

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
	"path/filepath"
	"time"

	"k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
)

// authority is the environment's certificate authority: it signs every
// member's serving certificate, and kubeconfigs trust it.
type authority struct {
	cert *x509.Certificate
	key  crypto.Signer
}

// pki holds the paths of the environment's shared key material.
type pki struct {
	CACert string `json:"caCert"`
	CAKey  string `json:"caKey"`
	// ServiceAccountKey signs and verifies service-account tokens in every member.
	ServiceAccountKey string `json:"serviceAccountKey"`
}

// createPKI writes a new CA and service-account key into dir.
func createPKI(dir string) (pki, error) {
	p := pki{
		CACert:            filepath.Join(dir, "ca.crt"),
		CAKey:             filepath.Join(dir, "ca.key"),
		ServiceAccountKey: filepath.Join(dir, "service-account.key"),
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return p, err
	}
	ca, err := cert.NewSelfSignedCACert(cert.Config{CommonName: "memberenv-ca"}, key)
	if err != nil {
		return p, fmt.Errorf("creating the environment CA: %w", err)
	}
	if err := writeCertKey(p.CACert, p.CAKey, ca, key); err != nil {
		return p, err
	}
	saKey, err := keyutil.MakeEllipticPrivateKeyPEM()
	if err != nil {
		return p, err
	}
	return p, keyutil.WriteKey(p.ServiceAccountKey, saKey)
}

func (p pki) load() (*authority, error) {
	certs, err := cert.CertsFromFile(p.CACert)
	if err != nil {
		return nil, fmt.Errorf("reading CA certificate: %w", err)
	}
	key, err := keyutil.PrivateKeyFromFile(p.CAKey)
	if err != nil {
		return nil, fmt.Errorf("reading CA key: %w", err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("CA key %s cannot sign", p.CAKey)
	}
	return &authority{cert: certs[0], key: signer}, nil
}

// issueServing writes a serving certificate for 127.0.0.1 and localhost.
func (a *authority) issueServing(certPath, keyPath, commonName string) error {
	return a.issue(certPath, keyPath, x509.Certificate{
		Subject:     pkix.Name{CommonName: commonName},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:    []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.IPv6loopback},
	})
}

// issueClient writes a client certificate whose user and groups the
// member apiservers take from CN and O.
func (a *authority) issueClient(certPath, keyPath, user string, groups ...string) error {
	return a.issue(certPath, keyPath, x509.Certificate{
		Subject:     pkix.Name{CommonName: user, Organization: groups},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
}

func (a *authority) issue(certPath, keyPath string, tmpl x509.Certificate) error {
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
	tmpl.NotAfter = time.Now().Add(10 * 365 * 24 * time.Hour)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment
	der, err := x509.CreateCertificate(rand.Reader, &tmpl, a.cert, key.Public(), a.key)
	if err != nil {
		return fmt.Errorf("signing certificate for %q: %w", tmpl.Subject.CommonName, err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		return err
	}
	return writeCertKey(certPath, keyPath, c, key)
}

func writeCertKey(certPath, keyPath string, c *x509.Certificate, key *ecdsa.PrivateKey) error {
	certPEM, err := cert.EncodeCertificates(c)
	if err != nil {
		return err
	}
	keyPEM, err := keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		return err
	}
	if err := cert.WriteCert(certPath, certPEM); err != nil {
		return err
	}
	return keyutil.WriteKey(keyPath, keyPEM)
}
