package v1beta1

import "strings"

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
