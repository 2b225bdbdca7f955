package apiserver

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
)

// A certificate of the agents CA is only ever an agent: its groups are
// the agents' whatever its organizations say, and any other name fails.
func TestAgentUser(t *testing.T) {
	cert := func(cn string, orgs ...string) []*x509.Certificate {
		return []*x509.Certificate{{Subject: pkix.Name{CommonName: cn, Organization: orgs}}}
	}
	resp, ok, err := agentUser(cert(federationv1beta1.AgentUser("edge1"), "system:masters"))
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, federationv1beta1.AgentUser("edge1"), resp.User.GetName())
	assert.Equal(t, []string{federationv1beta1.AgentGroup}, resp.User.GetGroups())

	for _, cn := range []string{"admin", "system:federation-controller-manager", federationv1beta1.AgentUserPrefix, federationv1beta1.AgentUser("Not_A_Name")} {
		_, ok, err := agentUser(cert(cn, federationv1beta1.AgentGroup))
		assert.False(t, ok, cn)
		assert.Error(t, err, cn)
	}
}
