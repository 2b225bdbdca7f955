package agentcerts

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
)

var now = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// request is a CSR PEM for tmpl, signed by a new key.
func request(t *testing.T, tmpl x509.CertificateRequest) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	der, err := x509.CreateCertificateRequest(rand.Reader, &tmpl, key)
	require.NoError(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

func agentSubject(cluster string) pkix.Name {
	return pkix.Name{CommonName: federationv1beta1.AgentUser(cluster), Organization: []string{federationv1beta1.AgentGroup}}
}

func csrFor(t *testing.T, tmpl x509.CertificateRequest, user string, groups ...string) *certificatesv1.CertificateSigningRequest {
	return &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "csr-1"},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    request(t, tmpl),
			SignerName: SignerName,
			Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth},
			Username:   user,
			Groups:     append(groups, "system:authenticated"),
		},
	}
}

func bootstrapUser(id string) (string, string) {
	return "system:bootstrap:" + id, federationv1beta1.AgentBootstrapGroup
}

// tokenSecret is a bootstrap token of id for cluster.
func tokenSecret(id, cluster, autoAccept string, expires time.Time) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "bootstrap-token-" + id, Namespace: federationv1beta1.SystemNamespace,
			Labels: map[string]string{federationv1beta1.AgentClusterLabel: cluster}},
		Type: bootstrapapi.SecretTypeBootstrapToken,
		Data: map[string][]byte{
			bootstrapapi.BootstrapTokenIDKey:         []byte(id),
			bootstrapapi.BootstrapTokenSecretKey:     []byte("0123456789abcdef"),
			bootstrapapi.BootstrapTokenExpirationKey: []byte(expires.Format(time.RFC3339)),
			federationv1beta1.AgentAutoAcceptKey:     []byte(autoAccept),
		},
	}
}

func lookup(secrets ...*corev1.Secret) TokenLookup {
	return func(name string) (*corev1.Secret, error) {
		for _, s := range secrets {
			if s.Name == name {
				return s, nil
			}
		}
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, name)
	}
}

func TestJudge(t *testing.T) {
	later := now.Add(time.Hour)
	tokens := lookup(
		tokenSecret("aaaaaa", "edge1", "true", later),
		tokenSecret("bbbbbb", "edge1", "false", later),
		tokenSecret("cccccc", "edge1", "true", now.Add(-time.Minute)),
		tokenSecret("dddddd", "edge2", "true", later),
	)
	user, group := bootstrapUser("aaaaaa")
	tests := []struct {
		name   string
		csr    func() *certificatesv1.CertificateSigningRequest
		action Action
		// message holds this, when given.
		message string
		token   string
	}{
		{name: "right CN, auto-accepting token", action: Approve, token: "bootstrap-token-aaaaaa",
			csr: func() *certificatesv1.CertificateSigningRequest {
				return csrFor(t, x509.CertificateRequest{Subject: agentSubject("edge1")}, user, group)
			}},
		{name: "wrong CN", action: Deny, message: "common name",
			csr: func() *certificatesv1.CertificateSigningRequest {
				return csrFor(t, x509.CertificateRequest{Subject: pkix.Name{CommonName: "admin", Organization: []string{federationv1beta1.AgentGroup}}}, user, group)
			}},
		{name: "extra O", action: Deny, message: "organizations",
			csr: func() *certificatesv1.CertificateSigningRequest {
				s := agentSubject("edge1")
				s.Organization = append(s.Organization, "system:masters")
				return csrFor(t, x509.CertificateRequest{Subject: s}, user, group)
			}},
		{name: "O system:masters only", action: Deny, message: "organizations",
			csr: func() *certificatesv1.CertificateSigningRequest {
				s := agentSubject("edge1")
				s.Organization = []string{"system:masters"}
				return csrFor(t, x509.CertificateRequest{Subject: s}, user, group)
			}},
		{name: "extra OU", action: Deny, message: "subject",
			csr: func() *certificatesv1.CertificateSigningRequest {
				s := agentSubject("edge1")
				s.OrganizationalUnit = []string{"x"}
				return csrFor(t, x509.CertificateRequest{Subject: s}, user, group)
			}},
		{name: "SAN", action: Deny, message: "subject alternative names",
			csr: func() *certificatesv1.CertificateSigningRequest {
				return csrFor(t, x509.CertificateRequest{Subject: agentSubject("edge1"), DNSNames: []string{"edge1.example.com"}}, user, group)
			}},
		{name: "IP SAN", action: Deny, message: "subject alternative names",
			csr: func() *certificatesv1.CertificateSigningRequest {
				return csrFor(t, x509.CertificateRequest{Subject: agentSubject("edge1"), IPAddresses: []net.IP{net.IPv4(10, 0, 0, 1)}}, user, group)
			}},
		{name: "server auth usage", action: Deny, message: "usage",
			csr: func() *certificatesv1.CertificateSigningRequest {
				c := csrFor(t, x509.CertificateRequest{Subject: agentSubject("edge1")}, user, group)
				c.Spec.Usages = append(c.Spec.Usages, certificatesv1.UsageServerAuth)
				return c
			}},
		{name: "no client auth", action: Deny, message: "usages",
			csr: func() *certificatesv1.CertificateSigningRequest {
				c := csrFor(t, x509.CertificateRequest{Subject: agentSubject("edge1")}, user, group)
				c.Spec.Usages = []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature}
				return c
			}},
		{name: "key encipherment allowed", action: Approve,
			csr: func() *certificatesv1.CertificateSigningRequest {
				c := csrFor(t, x509.CertificateRequest{Subject: agentSubject("edge1")}, user, group)
				c.Spec.Usages = append(c.Spec.Usages, certificatesv1.UsageKeyEncipherment)
				return c
			}},
		{name: "other signer, not ours", action: Ignore,
			csr: func() *certificatesv1.CertificateSigningRequest {
				c := csrFor(t, x509.CertificateRequest{Subject: agentSubject("edge1")}, "admin", "system:masters")
				c.Spec.SignerName = certificatesv1.KubeletServingSignerName
				return c
			}},
		{name: "other signer by a token", action: Deny, message: "signer",
			csr: func() *certificatesv1.CertificateSigningRequest {
				c := csrFor(t, x509.CertificateRequest{Subject: agentSubject("edge1")}, user, group)
				c.Spec.SignerName = certificatesv1.KubeletServingSignerName
				return c
			}},
		{name: "another cluster's token", action: Deny, message: `bootstrap token "dddddd" is for cluster "edge2", not for cluster "edge1"`,
			csr: func() *certificatesv1.CertificateSigningRequest {
				u, g := bootstrapUser("dddddd")
				return csrFor(t, x509.CertificateRequest{Subject: agentSubject("edge1")}, u, g)
			}},
		{name: "expired token", action: Deny, message: "expired",
			csr: func() *certificatesv1.CertificateSigningRequest {
				u, g := bootstrapUser("cccccc")
				return csrFor(t, x509.CertificateRequest{Subject: agentSubject("edge1")}, u, g)
			}},
		{name: "unknown or used token", action: Deny, message: "unknown or already used",
			csr: func() *certificatesv1.CertificateSigningRequest {
				u, g := bootstrapUser("zzzzzz")
				return csrFor(t, x509.CertificateRequest{Subject: agentSubject("edge1")}, u, g)
			}},
		{name: "no auto-accept: waits for kubefed accept", action: Wait, message: "kubefed accept edge1", token: "bootstrap-token-bbbbbb",
			csr: func() *certificatesv1.CertificateSigningRequest {
				u, g := bootstrapUser("bbbbbb")
				return csrFor(t, x509.CertificateRequest{Subject: agentSubject("edge1")}, u, g)
			}},
		{name: "a bootstrap token of another group: not ours", action: Ignore,
			csr: func() *certificatesv1.CertificateSigningRequest {
				return csrFor(t, x509.CertificateRequest{Subject: agentSubject("edge1")}, "system:bootstrap:aaaaaa", "system:bootstrappers:kubeadm:default-node-token")
			}},
		{name: "an admin's request: left to admins", action: Ignore,
			csr: func() *certificatesv1.CertificateSigningRequest {
				return csrFor(t, x509.CertificateRequest{Subject: agentSubject("edge1")}, "admin", "system:masters")
			}},
		{name: "renewal by the agent itself", action: Approve, message: "renews",
			csr: func() *certificatesv1.CertificateSigningRequest {
				return csrFor(t, x509.CertificateRequest{Subject: agentSubject("edge1")}, federationv1beta1.AgentUser("edge1"), federationv1beta1.AgentGroup)
			}},
		{name: "renewal by another agent", action: Deny, message: `the agent of cluster "edge2" may not request a certificate for cluster "edge1"`,
			csr: func() *certificatesv1.CertificateSigningRequest {
				return csrFor(t, x509.CertificateRequest{Subject: agentSubject("edge1")}, federationv1beta1.AgentUser("edge2"), federationv1beta1.AgentGroup)
			}},
		{name: "renewal asking for more", action: Deny, message: "organizations",
			csr: func() *certificatesv1.CertificateSigningRequest {
				s := agentSubject("edge1")
				s.Organization = []string{"system:masters"}
				return csrFor(t, x509.CertificateRequest{Subject: s}, federationv1beta1.AgentUser("edge1"), federationv1beta1.AgentGroup)
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Judge(tt.csr(), tokens, now)
			assert.Equal(t, tt.action, v.Action, v.Message)
			assert.Contains(t, v.Message, tt.message)
			if tt.token != "" {
				assert.Equal(t, tt.token, v.TokenSecret)
			}
			if v.Action == Deny {
				assert.NotEmpty(t, v.Reason)
			}
		})
	}
}

func TestSignableWhateverTheApproval(t *testing.T) {
	user, group := bootstrapUser("aaaaaa")
	ok := csrFor(t, x509.CertificateRequest{Subject: agentSubject("edge1")}, user, group)
	cluster, err := Signable(ok)
	require.NoError(t, err)
	assert.Equal(t, "edge1", cluster)

	renewal := csrFor(t, x509.CertificateRequest{Subject: agentSubject("edge1")}, federationv1beta1.AgentUser("edge1"), federationv1beta1.AgentGroup)
	_, err = Signable(renewal)
	assert.NoError(t, err)

	for name, csr := range map[string]*certificatesv1.CertificateSigningRequest{
		"an admin's request for an agent": csrFor(t, x509.CertificateRequest{Subject: agentSubject("edge1")}, "admin", "system:masters"),
		"another agent's":                 csrFor(t, x509.CertificateRequest{Subject: agentSubject("edge1")}, federationv1beta1.AgentUser("edge2"), federationv1beta1.AgentGroup),
		"system:masters": csrFor(t, x509.CertificateRequest{Subject: pkix.Name{CommonName: federationv1beta1.AgentUser("edge1"),
			Organization: []string{"system:masters"}}}, user, group),
	} {
		_, err := Signable(csr)
		assert.Error(t, err, name)
	}
}

func TestOldAgentRequestsExpire(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(-d)) }
	pending := &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: at(23 * time.Hour)}}
	assert.False(t, expired(pending, now), "pending for less than a day")
	pending.CreationTimestamp = at(25 * time.Hour)
	assert.True(t, expired(pending, now))

	decided := &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: at(3 * time.Hour)}}
	decided.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{
		{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, LastUpdateTime: at(30 * time.Minute)}}
	assert.False(t, expired(decided, now), "decided half an hour ago")
	decided.Status.Conditions[0].LastUpdateTime = at(61 * time.Minute)
	assert.True(t, expired(decided, now))
}
