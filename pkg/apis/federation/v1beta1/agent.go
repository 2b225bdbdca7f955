package v1beta1

import (
	"slices"
	"strings"
)

// The identities of federation agents (issue 36): a member the federation
// cannot reach runs an agent that dials out to the federation apiserver.
// The agent first authenticates with a bootstrap token (a Secret of type
// bootstrap.kubernetes.io/token in SystemNamespace, `kubefed token
// create`), asks for a client certificate of its own with a
// CertificateSigningRequest, and from then on is AgentUser(cluster) in
// AgentGroup, certified by the federation's agents CA.
const (
	// AgentUserPrefix starts the user name of every agent; the rest is
	// its Cluster's name.
	AgentUserPrefix = "system:federation:agent:"
	// AgentGroup is the one group of every agent.
	AgentGroup = "system:federation:agents"
	// AgentBootstrapGroup is the group of the bootstrap tokens kubefed
	// token create makes (their auth-extra-groups).
	AgentBootstrapGroup = "system:bootstrappers:federation-agents"
	// AgentClusterLabel on a bootstrap token Secret names the Cluster the
	// token may get a certificate for.
	AgentClusterLabel = "federation.k8s.io/agent-cluster"
	// AgentAutoAcceptKey in a bootstrap token Secret's data is "true" when
	// the controller manager approves the token's certificate request by
	// itself, "false" when it waits for `kubefed accept`.
	AgentAutoAcceptKey = "federation-auto-accept"
)

// AgentUser is the user name of cluster's agent.
func AgentUser(cluster string) string { return AgentUserPrefix + cluster }

// AgentCluster is the cluster whose agent user is, if user is an agent's
// user name.
func AgentCluster(user string) (string, bool) {
	cluster, ok := strings.CutPrefix(user, AgentUserPrefix)
	if !ok || cluster == "" {
		return "", false
	}
	return cluster, true
}

// Agent certificates are bound to the one Cluster object they were issued
// for: its annotation AgentCertificatesAnnotation lists their serial
// numbers (newest first, at most MaxAgentCertificates), and the tunnel
// takes only those. An agent of a Cluster that was deleted and created
// again under the same name, or whose serials an admin removed, is
// refused until it registers again.
const (
	AgentCertificatesAnnotation = "federation.k8s.io/agent-certificates"
	// AgentSerialExtra is the user extra that carries an agent's
	// certificate serial (lowercase hex) from authentication to the tunnel
	// and to its renewal requests.
	AgentSerialExtra = "federation.k8s.io/agent-certificate-serial"
	// MaxAgentCertificates keeps the current certificate, the one it
	// renewed, and one more for a renewal in flight.
	MaxAgentCertificates = 3
)

// AgentCertificates are the serials bound to cluster, newest first.
func AgentCertificates(cluster *Cluster) []string {
	v := cluster.Annotations[AgentCertificatesAnnotation]
	if v == "" {
		return nil
	}
	return strings.Split(v, ",")
}

// AgentCertificateBound reports whether serial is one of cluster's.
func AgentCertificateBound(cluster *Cluster, serial string) bool {
	return serial != "" && slices.Contains(AgentCertificates(cluster), serial)
}

// WithAgentCertificate returns the annotation's value with serial first
// and, when it is one of them, keep second: the certificate a renewal was
// made with stays valid, so that an agent that lost the answer and asks
// again with it is not locked out by its own renewals.
func WithAgentCertificate(cluster *Cluster, serial, keep string) string {
	out := []string{serial}
	if keep != "" && keep != serial && AgentCertificateBound(cluster, keep) {
		out = append(out, keep)
	}
	for _, s := range AgentCertificates(cluster) {
		if !slices.Contains(out, s) && len(out) < MaxAgentCertificates {
			out = append(out, s)
		}
	}
	return strings.Join(out, ",")
}
