package agentcerts

import (
	"crypto"
	"encoding/pem"
	"fmt"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
	"k8s.io/kubernetes/pkg/controller/certificates/authority"
)

// minDuration is the shortest certificate the signer issues, whatever a
// request asks for (spec.expirationSeconds).
const minDuration = time.Minute

// Signer signs agents' certificates with the agents CA.
type Signer struct {
	ca *authority.CertificateAuthority
	// duration of the certificates (--agent-certificate-duration).
	duration time.Duration
	now      func() time.Time
}

// NewSigner loads the agents CA from PEM files.
func NewSigner(certFile, keyFile string, duration time.Duration) (*Signer, error) {
	certs, err := certutil.CertsFromFile(certFile)
	if err != nil {
		return nil, fmt.Errorf("reading the agents CA certificate %s: %w", certFile, err)
	}
	key, err := keyutil.PrivateKeyFromFile(keyFile)
	if err != nil {
		return nil, fmt.Errorf("reading the agents CA key %s: %w", keyFile, err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("the agents CA key %s cannot sign", keyFile)
	}
	if duration < minDuration {
		return nil, fmt.Errorf("agent certificate duration %s: at least %s", duration, minDuration)
	}
	return &Signer{ca: &authority.CertificateAuthority{Certificate: certs[0], PrivateKey: signer}, duration: duration, now: time.Now}, nil
}

// Sign returns the PEM certificate of an agent's request (checked with
// Signable by the caller).
func (s *Signer) Sign(csr *certificatesv1.CertificateSigningRequest) ([]byte, error) {
	block, _ := pem.Decode(csr.Spec.Request)
	if block == nil {
		return nil, fmt.Errorf("spec.request holds no PEM block")
	}
	ttl := s.ttl(csr.Spec.ExpirationSeconds)
	der, err := s.ca.Sign(block.Bytes, authority.PermissiveSigningPolicy{
		TTL:    ttl,
		Usages: csr.Spec.Usages,
		// For clock skew; a small part of short lifetimes, so that
		// rotation at 70-90% of the lifetime comes after the issue.
		Backdate: min(5*time.Minute, ttl/10),
		Short:    8 * time.Hour,
		Now:      s.now,
	})
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), nil
}

// ttl is the configured duration, or the requested one when shorter (at
// least minDuration).
func (s *Signer) ttl(expirationSeconds *int32) time.Duration {
	if expirationSeconds == nil {
		return s.duration
	}
	requested := time.Duration(*expirationSeconds) * time.Second
	return max(minDuration, min(requested, s.duration))
}
