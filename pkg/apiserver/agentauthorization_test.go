package apiserver

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
)

func resourceRequest(u user.Info, verb, group, resource, subresource, namespace, name string) authorizer.AttributesRecord {
	return authorizer.AttributesRecord{User: u, Verb: verb, APIGroup: group, APIVersion: "v1", Resource: resource,
		Subresource: subresource, Namespace: namespace, Name: name, ResourceRequest: true}
}

func TestAgentAuthorizer(t *testing.T) {
	agent := &user.DefaultInfo{Name: federationv1beta1.AgentUser("edge1"), Groups: []string{federationv1beta1.AgentGroup, user.AllAuthenticated}}
	token := &user.DefaultInfo{Name: "system:bootstrap:abcdef", Groups: []string{"system:bootstrappers", federationv1beta1.AgentBootstrapGroup, user.AllAuthenticated}}
	// Claims an agent's group without an agent's name, or more groups.
	odd := &user.DefaultInfo{Name: "someone", Groups: []string{federationv1beta1.AgentGroup}}
	agentWithMore := &user.DefaultInfo{Name: federationv1beta1.AgentUser("edge1"), Groups: []string{federationv1beta1.AgentGroup, "system:masters"}}
	tenant := &user.DefaultInfo{Name: "alice", Groups: []string{user.AllAuthenticated}}
	const fed, certs = "federation", "certificates.k8s.io"
	tests := []struct {
		name string
		a    authorizer.Attributes
		want authorizer.Decision
	}{
		{"agent: its own tunnel", resourceRequest(agent, "get", fed, "clusters", "tunnel", "", "edge1"), authorizer.DecisionAllow},
		{"agent: another cluster's tunnel", resourceRequest(agent, "get", fed, "clusters", "tunnel", "", "edge2"), authorizer.DecisionDeny},
		{"agent: its tunnel with another verb", resourceRequest(agent, "create", fed, "clusters", "tunnel", "", "edge1"), authorizer.DecisionDeny},
		{"agent: its own proxy", resourceRequest(agent, "get", fed, "clusters", "proxy", "", "edge1"), authorizer.DecisionDeny},
		{"agent: its Cluster", resourceRequest(agent, "get", fed, "clusters", "", "", "edge1"), authorizer.DecisionDeny},
		{"agent: list clusters", resourceRequest(agent, "list", fed, "clusters", "", "", ""), authorizer.DecisionDeny},
		{"agent: its Cluster's status", resourceRequest(agent, "update", fed, "clusters", "status", "", "edge1"), authorizer.DecisionDeny},
		{"agent: secrets", resourceRequest(agent, "get", "", "secrets", "", federationv1beta1.SystemNamespace, "edge1"), authorizer.DecisionDeny},
		{"agent: list secrets", resourceRequest(agent, "list", "", "secrets", "", "", ""), authorizer.DecisionDeny},
		{"agent: configmaps", resourceRequest(agent, "get", "", "configmaps", "", "default", "x"), authorizer.DecisionDeny},
		{"agent: create a CSR", resourceRequest(agent, "create", certs, "certificatesigningrequests", "", "", ""), authorizer.DecisionAllow},
		{"agent: get a CSR", resourceRequest(agent, "get", certs, "certificatesigningrequests", "", "", "csr-1"), authorizer.DecisionAllow},
		{"agent: watch a CSR by name", resourceRequest(agent, "watch", certs, "certificatesigningrequests", "", "", "csr-1"), authorizer.DecisionAllow},
		{"agent: list every CSR", resourceRequest(agent, "list", certs, "certificatesigningrequests", "", "", ""), authorizer.DecisionDeny},
		{"agent: approve a CSR", resourceRequest(agent, "update", certs, "certificatesigningrequests", "approval", "", "csr-1"), authorizer.DecisionDeny},
		{"agent: write a CSR's certificate", resourceRequest(agent, "update", certs, "certificatesigningrequests", "status", "", "csr-1"), authorizer.DecisionDeny},
		{"agent: delete a CSR", resourceRequest(agent, "delete", certs, "certificatesigningrequests", "", "", "csr-1"), authorizer.DecisionDeny},
		{"agent: discovery", authorizer.AttributesRecord{User: agent, Verb: "get", Path: "/apis"}, authorizer.DecisionDeny},
		{"agent: /version", authorizer.AttributesRecord{User: agent, Verb: "get", Path: "/version"}, authorizer.DecisionAllow},
		{"agent's group without its name", resourceRequest(odd, "get", fed, "clusters", "tunnel", "", "edge1"), authorizer.DecisionDeny},
		{"agent with more groups", resourceRequest(agentWithMore, "get", fed, "clusters", "tunnel", "", "edge1"), authorizer.DecisionDeny},
		{"token: create a CSR", resourceRequest(token, "create", certs, "certificatesigningrequests", "", "", ""), authorizer.DecisionAllow},
		{"token: watch a CSR by name", resourceRequest(token, "watch", certs, "certificatesigningrequests", "", "", "csr-1"), authorizer.DecisionAllow},
		{"token: list every CSR", resourceRequest(token, "list", certs, "certificatesigningrequests", "", "", ""), authorizer.DecisionDeny},
		{"token: approve a CSR", resourceRequest(token, "update", certs, "certificatesigningrequests", "approval", "", "csr-1"), authorizer.DecisionDeny},
		{"token: who am I", resourceRequest(token, "create", "authentication.k8s.io", "selfsubjectreviews", "", "", ""), authorizer.DecisionAllow},
		{"token: a tunnel", resourceRequest(token, "get", fed, "clusters", "tunnel", "", "edge1"), authorizer.DecisionDeny},
		{"token: secrets", resourceRequest(token, "get", "", "secrets", "", federationv1beta1.SystemNamespace, "bootstrap-token-abcdef"), authorizer.DecisionDeny},
		{"token: configmaps", resourceRequest(token, "list", "", "configmaps", "", "", ""), authorizer.DecisionDeny},
		{"token: list clusters", resourceRequest(token, "list", fed, "clusters", "", "", ""), authorizer.DecisionDeny},
		{"tenant: left to RBAC", resourceRequest(tenant, "create", certs, "certificatesigningrequests", "", "", ""), authorizer.DecisionNoOpinion},
		{"tenant: a tunnel, left to RBAC", resourceRequest(tenant, "get", fed, "clusters", "tunnel", "", "edge1"), authorizer.DecisionNoOpinion},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, reason, err := agentAuthorizer{}.Authorize(context.Background(), tt.a)
			assert.NoError(t, err)
			assert.Equal(t, tt.want, got, reason)
			if got == authorizer.DecisionDeny {
				assert.NotEmpty(t, reason)
			}
		})
	}
}
