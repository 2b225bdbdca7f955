package agentcerts

import (
	"crypto/x509"
	"encoding/asn1"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	bootstraputil "k8s.io/cluster-bootstrap/token/util"
	bootstrapsecretutil "k8s.io/cluster-bootstrap/util/secrets"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
)

// SignerName is the signer of agents' certificates: client certificates
// of the federation apiserver.
const SignerName = certificatesv1.KubeAPIServerClientSignerName

// Action is what to do with a pending CertificateSigningRequest.
type Action string

// ReasonAgentRenewal approves an agent's request for its own certificate,
// made with its current one; the controller then checks that one is bound
// to the current Cluster (renewsBoundCertificate).
const ReasonAgentRenewal = "AgentRenewal"

const (
	// Ignore: not an agent's request; someone else (an admin) decides.
	Ignore Action = "Ignore"
	// Approve the request (and delete the bootstrap token used, if any).
	Approve Action = "Approve"
	// Deny the request, saying why.
	Deny Action = "Deny"
	// Wait for the federation's admin: kubefed accept CLUSTER.
	Wait Action = "Wait"
)

// Verdict is the judgement of one request.
type Verdict struct {
	Action Action
	// Cluster is the cluster whose agent the certificate would be, when
	// the request asks for one.
	Cluster string
	// Reason and Message go into the condition written.
	Reason, Message string
	// TokenSecret is the bootstrap token Secret (in federation-system)
	// that authenticated the request: deleted once it is approved, as a
	// token is good for one certificate.
	TokenSecret string
}

// TokenLookup returns the bootstrap token Secret of a name in
// federation-system, or a NotFound error.
type TokenLookup func(name string) (*corev1.Secret, error)

// allowedUsages are the usages an agent's certificate may have: client
// authentication, with the key usages client-go's certificate manager
// asks for.
var allowedUsages = []certificatesv1.KeyUsage{
	certificatesv1.UsageClientAuth, certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment,
}

// Object identifiers of the subject attributes an agent's request has.
var (
	oidCommonName   = asn1.ObjectIdentifier{2, 5, 4, 3}
	oidOrganization = asn1.ObjectIdentifier{2, 5, 4, 10}
)

// bootstrapUserPrefix starts the user name of a bootstrap token.
const bootstrapUserPrefix = bootstrapapi.BootstrapUserPrefix

// CheckRequest checks that csr asks, of the agents' signer, for exactly an
// agent's client certificate: subject CN=system:federation:agent:CLUSTER,
// O=system:federation:agents and nothing else, no subject alternative
// names, usages client auth (with digital signature and key encipherment
// allowed). It returns CLUSTER.
func CheckRequest(csr *certificatesv1.CertificateSigningRequest) (string, error) {
	if csr.Spec.SignerName != SignerName {
		return "", fmt.Errorf("signer %q is not %s", csr.Spec.SignerName, SignerName)
	}
	block, _ := pem.Decode(csr.Spec.Request)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return "", errors.New("spec.request holds no PEM CERTIFICATE REQUEST")
	}
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return "", fmt.Errorf("parsing the certificate request: %w", err)
	}
	if err := req.CheckSignature(); err != nil {
		return "", fmt.Errorf("the certificate request's signature: %w", err)
	}
	cn := req.Subject.CommonName
	cluster, ok := federationv1beta1.AgentCluster(cn)
	if !ok {
		return "", fmt.Errorf("common name %q is not %sCLUSTER", cn, federationv1beta1.AgentUserPrefix)
	}
	if msgs := validation.IsDNS1123Subdomain(cluster); len(msgs) > 0 {
		return "", fmt.Errorf("common name %q: %q is no cluster name: %s", cn, cluster, msgs[0])
	}
	if !slices.Equal(req.Subject.Organization, []string{federationv1beta1.AgentGroup}) {
		return "", fmt.Errorf("organizations %q: an agent's are exactly [%s]", req.Subject.Organization, federationv1beta1.AgentGroup)
	}
	for _, n := range req.Subject.Names {
		if !n.Type.Equal(oidCommonName) && !n.Type.Equal(oidOrganization) {
			return "", fmt.Errorf("subject attribute %s: an agent's subject has only a common name and an organization", n.Type)
		}
	}
	if len(req.Subject.Names) != 2 || len(req.Subject.ExtraNames) > 0 {
		return "", errors.New("an agent's subject has exactly one common name and one organization")
	}
	if len(req.DNSNames)+len(req.IPAddresses)+len(req.EmailAddresses)+len(req.URIs) > 0 {
		return "", errors.New("an agent's certificate has no subject alternative names")
	}
	if !slices.Contains(csr.Spec.Usages, certificatesv1.UsageClientAuth) {
		return "", fmt.Errorf("usages %q: an agent's certificate is for %q", csr.Spec.Usages, certificatesv1.UsageClientAuth)
	}
	for _, u := range csr.Spec.Usages {
		if !slices.Contains(allowedUsages, u) {
			return "", fmt.Errorf("usage %q: an agent's certificate may only have %q", u, allowedUsages)
		}
	}
	return cluster, nil
}

// requester says who created csr: the agent of a cluster, or a bootstrap
// token of the agents (its ID).
func requester(csr *certificatesv1.CertificateSigningRequest) (agentOf, tokenID string) {
	name, groups := csr.Spec.Username, csr.Spec.Groups
	if cluster, ok := federationv1beta1.AgentCluster(name); ok && slices.Contains(groups, federationv1beta1.AgentGroup) {
		return cluster, ""
	}
	if id, ok := strings.CutPrefix(name, bootstrapUserPrefix); ok && slices.Contains(groups, federationv1beta1.AgentBootstrapGroup) {
		return "", id
	}
	return "", ""
}

// Judge decides a pending request (neither approved nor denied): approve
// an agent's request for its own renewed certificate, and a bootstrap
// token's for the cluster the token is labelled with when the token
// auto-accepts (else wait for kubefed accept); deny whatever else an agent
// or a token asks; ignore everyone else's requests.
func Judge(csr *certificatesv1.CertificateSigningRequest, tokens TokenLookup, now time.Time) Verdict {
	agentOf, tokenID := requester(csr)
	if agentOf == "" && tokenID == "" {
		return Verdict{Action: Ignore}
	}
	cluster, err := CheckRequest(csr)
	if err != nil {
		return Verdict{Action: Deny, Reason: "NotAnAgentCertificate", Message: "not an agent's client certificate: " + err.Error()}
	}
	if agentOf != "" {
		if agentOf != cluster {
			return Verdict{Action: Deny, Cluster: cluster, Reason: "OtherClustersAgent",
				Message: fmt.Sprintf("the agent of cluster %q may not request a certificate for cluster %q", agentOf, cluster)}
		}
		return Verdict{Action: Approve, Cluster: cluster, Reason: ReasonAgentRenewal,
			Message: fmt.Sprintf("the agent of cluster %q renews its certificate", cluster)}
	}
	name := bootstraputil.BootstrapTokenSecretName(tokenID)
	secret, err := tokens(name)
	switch {
	case apierrors.IsNotFound(err):
		return Verdict{Action: Deny, Cluster: cluster, Reason: "BootstrapTokenGone",
			Message: fmt.Sprintf("bootstrap token %q is unknown or already used", tokenID)}
	case err != nil:
		// Decided once the token can be read.
		return Verdict{Action: Wait, Cluster: cluster, Reason: "BootstrapTokenUnreadable", Message: err.Error()}
	}
	if secret.Type != bootstrapapi.SecretTypeBootstrapToken || secret.DeletionTimestamp != nil {
		return Verdict{Action: Deny, Cluster: cluster, Reason: "BootstrapTokenGone",
			Message: fmt.Sprintf("bootstrap token %q is unknown or already used", tokenID)}
	}
	if bootstrapsecretutil.HasExpired(secret, now) {
		return Verdict{Action: Deny, Cluster: cluster, Reason: "BootstrapTokenExpired",
			Message: fmt.Sprintf("bootstrap token %q expired at %s", tokenID, bootstrapsecretutil.GetData(secret, bootstrapapi.BootstrapTokenExpirationKey))}
	}
	if tokenCluster := secret.Labels[federationv1beta1.AgentClusterLabel]; tokenCluster != cluster {
		return Verdict{Action: Deny, Cluster: cluster, Reason: "OtherClustersToken",
			Message: fmt.Sprintf("bootstrap token %q is for cluster %q, not for cluster %q", tokenID, tokenCluster, cluster)}
	}
	if bootstrapsecretutil.GetData(secret, federationv1beta1.AgentAutoAcceptKey) != "true" {
		return Verdict{Action: Wait, Cluster: cluster, TokenSecret: name, Reason: "WaitingForAccept",
			Message: fmt.Sprintf("waiting for the federation's admin to accept cluster %q (kubefed accept %s)", cluster, cluster)}
	}
	return Verdict{Action: Approve, Cluster: cluster, TokenSecret: name, Reason: "AgentBootstrapAutoAccepted",
		Message: fmt.Sprintf("cluster %q's agent joined with bootstrap token %q, which auto-accepts", cluster, tokenID)}
}

// Signable checks, whatever the request's approval says, that csr is one
// the agents CA signs: an agent's certificate (CheckRequest) requested by
// a bootstrap token of the agents or by that cluster's own agent. It
// returns the cluster.
func Signable(csr *certificatesv1.CertificateSigningRequest) (string, error) {
	cluster, err := CheckRequest(csr)
	if err != nil {
		return "", err
	}
	agentOf, tokenID := requester(csr)
	switch {
	case agentOf == cluster:
		return cluster, nil
	case tokenID != "":
		return cluster, nil
	case agentOf != "":
		return "", fmt.Errorf("requested by the agent of cluster %q for cluster %q", agentOf, cluster)
	}
	return "", fmt.Errorf("requested by %q, neither a bootstrap token of %s nor the agent of cluster %q", csr.Spec.Username, federationv1beta1.AgentBootstrapGroup, cluster)
}

// Condition returns whether csr has a condition of type t.
func Condition(csr *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) bool {
	for _, c := range csr.Status.Conditions {
		if c.Type == t && c.Status != corev1.ConditionFalse {
			return true
		}
	}
	return false
}

// Pending: neither approved nor denied (nor failed).
func Pending(csr *certificatesv1.CertificateSigningRequest) bool {
	return !Condition(csr, certificatesv1.CertificateApproved) && !Condition(csr, certificatesv1.CertificateDenied) &&
		!Condition(csr, certificatesv1.CertificateFailed)
}

// asksForAgent: the request names an agent (its common name), or an
// agent or an agents' bootstrap token made it.
func asksForAgent(csr *certificatesv1.CertificateSigningRequest) bool {
	if agentOf, tokenID := requester(csr); agentOf != "" || tokenID != "" {
		return true
	}
	block, _ := pem.Decode(csr.Spec.Request)
	if block == nil {
		return false
	}
	req, err := x509.ParseCertificateRequest(block.Bytes)
	return err == nil && strings.HasPrefix(req.Subject.CommonName, federationv1beta1.AgentUserPrefix)
}
