package deploy_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/federation-v1/federation/test/kubectl"
)

// agentValues are what kubefed join sets in the agent chart.
var agentValues = []string{
	"cluster=cluster1", "federationName=fed", "federation.addresses={https://federation.example:443}",
	"federation.ca=-----BEGIN CERTIFICATE-----", "bootstrapToken=abcdef.0123456789abcdef",
	"memberCredential.secretName=federation-fed-token",
}

func (c *chartTool) agentChart() string {
	return filepath.Join(c.root, "deploy", "charts", "federation-agent")
}

// agentTemplate renders the agent chart as kubefed join does (release
// federation-agent) with --set values.
func (c *chartTool) agentTemplate(t *testing.T, values ...string) (*rendered, error) {
	t.Helper()
	args := []string{"template", "federation-agent", c.agentChart(), "--namespace", namespace}
	for _, v := range values {
		args = append(args, "--set", v)
	}
	out, err := c.run(args...)
	if err != nil {
		return nil, err
	}
	return &rendered{t: t, yaml: out, objects: parseObjects(t, out)}, nil
}

// TestAgentChart: the agent chart lints, its command line has only flags
// federation-agent has, and what it cannot run without is refused naming
// the value.
func TestAgentChart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Helm and the binaries")
	}
	c := newChartTool(t)
	args := []string{"lint", "--strict", c.agentChart()}
	for _, v := range agentValues {
		args = append(args, "--set", v)
	}
	out, err := c.run(args...)
	require.NoError(t, err, out)

	for _, values := range [][]string{
		agentValues,
		append(agentValues[:2:2], "federation.addresses={https://a,https://b}", "memberCredential.secretName=s",
			"federation.caCertHash=sha256:0000000000000000000000000000000000000000000000000000000000000000",
			"httpsProxy=http://proxy:3128", "hostNetwork=true"),
	} {
		r, err := c.agentTemplate(t, values...)
		require.NoError(t, err, "%v", values)
		assert.Subset(t, r.keys(), []string{"ServiceAccount/federation-agent", "Role/federation-agent", "RoleBinding/federation-agent",
			"Secret/federation-agent-credential", "Deployment/federation-agent"})
		assertFlagsExist(t, r)
	}

	for _, tc := range []struct {
		drop, want string
	}{
		{"cluster=cluster1", "cluster is required"},
		{"federationName=fed", "federationName is required"},
		{"federation.addresses={https://federation.example:443}", "federation.addresses is required"},
		{"federation.ca=-----BEGIN CERTIFICATE-----", "give exactly one of federation.ca"},
		{"memberCredential.secretName=federation-fed-token", "memberCredential.secretName is required"},
	} {
		var values []string
		for _, v := range agentValues {
			if v != tc.drop {
				values = append(values, v)
			}
		}
		_, err := c.agentTemplate(t, values...)
		assert.ErrorContains(t, err, tc.want, "without %s", tc.drop)
	}
	_, err = c.agentTemplate(t, append(agentValues, "federation.addresses={http://federation.example}")...)
	assert.ErrorContains(t, err, "/federation/addresses/0")
}

// agentDryRun: every object of the agent chart is accepted by a real
// kube-apiserver.
func agentDryRun(t *testing.T, c *chartTool, member kubectl.Runner) {
	t.Helper()
	r, err := c.agentTemplate(t, agentValues...)
	require.NoError(t, err)
	dryRun(t, member, r.yaml, len(r.objects))
}
