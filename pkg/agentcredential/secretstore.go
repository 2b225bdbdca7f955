package agentcredential

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/certificate"
	"k8s.io/client-go/util/retry"
)

// Keys of the agent's credential Secret: the certificate and its key, in
// PEM, as in a kubernetes.io/tls Secret.
const (
	SecretCertKey = "tls.crt"
	SecretKeyKey  = "tls.key"
)

// secretTimeout bounds each read or write of the Secret: the certificate
// manager's Store has no context.
const secretTimeout = 30 * time.Second

// SecretStore keeps the agent's key and certificate in one Secret of the
// member, for an agent in a pod (no volume outlives it). The Secret must
// exist (the agent chart creates it, empty): the store gets and updates
// it, and needs no right to create Secrets.
type SecretStore struct {
	client          kubernetes.Interface
	namespace, name string
}

var _ certificate.Store = (*SecretStore)(nil)

// NewSecretStore is the Secret namespace/name, read and written with client.
func NewSecretStore(client kubernetes.Interface, namespace, name string) *SecretStore {
	return &SecretStore{client: client, namespace: namespace, name: name}
}

// String names the Secret, for messages.
func (s *SecretStore) String() string { return "Secret " + s.namespace + "/" + s.name }

// Current is the certificate in the Secret; a certificate.NoCertKeyError
// when the Secret holds none yet.
func (s *SecretStore) Current() (*tls.Certificate, error) {
	ctx, cancel := context.WithTimeout(context.Background(), secretTimeout)
	defer cancel()
	secret, err := s.client.CoreV1().Secrets(s.namespace).Get(ctx, s.name, metav1.GetOptions{})
	if err != nil {
		return nil, s.explain("reading", err)
	}
	certPEM, keyPEM := secret.Data[SecretCertKey], secret.Data[SecretKeyKey]
	if len(certPEM) == 0 && len(keyPEM) == 0 {
		none := certificate.NoCertKeyError(s.String() + " holds no certificate yet")
		return nil, &none
	}
	cert, err := keyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s, err)
	}
	return cert, nil
}

// Update writes the certificate and key into the Secret and returns them.
func (s *SecretStore) Update(certPEM, keyPEM []byte) (*tls.Certificate, error) {
	cert, err := keyPair(certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), secretTimeout)
	defer cancel()
	secrets := s.client.CoreV1().Secrets(s.namespace)
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		secret, err := secrets.Get(ctx, s.name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if secret.Data == nil {
			secret.Data = map[string][]byte{}
		}
		secret.Data[SecretCertKey], secret.Data[SecretKeyKey] = certPEM, keyPEM
		_, err = secrets.Update(ctx, secret, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return nil, s.explain("writing", err)
	}
	return cert, nil
}

// explain says what a failed call to the Secret needs.
func (s *SecretStore) explain(what string, err error) error {
	switch {
	case apierrors.IsNotFound(err):
		return fmt.Errorf("%s %s: it does not exist; the agent keeps its certificate there and does not create it (the federation-agent chart does): %w", what, s, err)
	case apierrors.IsForbidden(err):
		return fmt.Errorf("%s %s: the agent's service account may not (it needs get and update on that Secret): %w", what, s, err)
	}
	return fmt.Errorf("%s %s: %w", what, s, err)
}

// keyPair parses a certificate and its key, with the leaf parsed.
func keyPair(certPEM, keyPEM []byte) (*tls.Certificate, error) {
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("the agent's certificate and key: %w", err)
	}
	if cert.Leaf == nil {
		if cert.Leaf, err = x509.ParseCertificate(cert.Certificate[0]); err != nil {
			return nil, fmt.Errorf("the agent's certificate: %w", err)
		}
	}
	return &cert, nil
}
