package agentcerts

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/generated/clientset/versioned"
)

// errNotBindable: the cluster a certificate would be for is gone, or no
// longer reached through an agent.
var errNotBindable = errors.New("not bindable")

// bind records the serial of certPEM on cluster's Cluster
// (federationv1beta1.AgentCertificatesAnnotation) before the certificate
// is handed out, so that the tunnel takes it from the first try, and only
// for this Cluster object; a renewal's own serial (keep) stays.
func bind(ctx context.Context, fed versioned.Interface, cluster string, certPEM []byte, keep string) error {
	serial, err := serialOf(certPEM)
	if err != nil {
		return err
	}
	clusters := fed.FederationV1beta1().Clusters()
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		c, err := clusters.Get(ctx, cluster, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("%w: cluster %q does not exist", errNotBindable, cluster)
		}
		if err != nil {
			return err
		}
		if !federationv1beta1.IsAgent(c) {
			return fmt.Errorf("%w: cluster %q is not reached through an agent (spec.connection)", errNotBindable, cluster)
		}
		if c.Annotations == nil {
			c.Annotations = map[string]string{}
		}
		c.Annotations[federationv1beta1.AgentCertificatesAnnotation] = federationv1beta1.WithAgentCertificate(c, serial, keep)
		_, err = clusters.Update(ctx, c, metav1.UpdateOptions{})
		return err
	})
}

func serialOf(certPEM []byte) (string, error) {
	block, _ := pem.Decode(certPEM)
	if block == nil {
		return "", errors.New("the signed certificate is not PEM")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return "", err
	}
	return cert.SerialNumber.Text(16), nil
}

// renewsBoundCertificate checks that an agent renewing its certificate
// does so with one issued for the current Cluster of its name.
func renewsBoundCertificate(ctx context.Context, fed versioned.Interface, csr *certificatesv1.CertificateSigningRequest, cluster string) (bool, string, error) {
	c, err := fed.FederationV1beta1().Clusters().Get(ctx, cluster, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, fmt.Sprintf("cluster %q does not exist: its agent renews nothing", cluster), nil
	}
	if err != nil {
		return false, "", err
	}
	serials := csr.Spec.Extra[federationv1beta1.AgentSerialExtra]
	if !federationv1beta1.IsAgent(c) || len(serials) != 1 || !federationv1beta1.AgentCertificateBound(c, serials[0]) {
		return false, fmt.Sprintf("the certificate renewing was not issued for the current cluster %q (it was deleted and created again, no longer uses an agent, or its agent's certificates were revoked)", cluster), nil
	}
	return true, "", nil
}
