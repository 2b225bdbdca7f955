package kubefed

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	bootstraputil "k8s.io/cluster-bootstrap/token/util"

	"github.com/federation-v1/federation/pkg/agentcredential"
	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/pki"
)

// The token Secret is one Kubernetes' bootstrap token authenticator
// accepts, labelled for its cluster, in the agents' group.
func TestTokenSecret(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	o := &tokenOptions{cluster: "edge1", ttl: time.Hour, now: func() time.Time { return now }}
	token, err := bootstraputil.GenerateBootstrapToken()
	require.NoError(t, err)
	s := o.tokenSecret(token)
	id := token[:6]
	assert.Equal(t, "bootstrap-token-"+id, s.Name)
	assert.Equal(t, federationv1beta1.SystemNamespace, s.Namespace)
	assert.Equal(t, bootstrapapi.SecretTypeBootstrapToken, s.Type)
	assert.Equal(t, map[string]string{federationv1beta1.AgentClusterLabel: "edge1"}, s.Labels)
	assert.Equal(t, id, s.StringData[bootstrapapi.BootstrapTokenIDKey])
	assert.Equal(t, token[7:], s.StringData[bootstrapapi.BootstrapTokenSecretKey])
	assert.Equal(t, "true", s.StringData[bootstrapapi.BootstrapTokenUsageAuthentication])
	assert.Equal(t, federationv1beta1.AgentBootstrapGroup, s.StringData[bootstrapapi.BootstrapTokenExtraGroupsKey])
	assert.Equal(t, "2030-01-01T01:00:00Z", s.StringData[bootstrapapi.BootstrapTokenExpirationKey])
	assert.Equal(t, "false", s.StringData[federationv1beta1.AgentAutoAcceptKey])

	o.autoAccept, o.ttl = true, 0
	s = o.tokenSecret(token)
	assert.Equal(t, "true", s.StringData[federationv1beta1.AgentAutoAcceptKey])
	assert.NotContains(t, s.StringData, bootstrapapi.BootstrapTokenExpirationKey, "--ttl=0 never expires")
}

func TestCAPin(t *testing.T) {
	ca, err := pki.NewCA("federation-ca")
	require.NoError(t, err)
	pin, err := caPin(&rest.Config{TLSClientConfig: rest.TLSClientConfig{CAData: ca.CertPEM()}})
	require.NoError(t, err)
	assert.Equal(t, agentcredential.Hash(ca.Cert), pin)
	assert.Regexp(t, "^sha256:[0-9a-f]{64}$", pin)

	_, err = caPin(&rest.Config{})
	assert.ErrorContains(t, err, "certificate-authority")
}
