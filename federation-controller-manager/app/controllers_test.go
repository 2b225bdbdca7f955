package app

import (
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/sets"
)

func TestEveryFederatedTypeIsAController(t *testing.T) {
	types := []string{"configmaps", "daemonsets", "deployments", "horizontalpodautoscalers", "ingresses",
		"jobs", "namespaces", "replicasets", "secrets", "services"}
	assert.Subset(t, sets.List(sets.KeySet(controllers)), types)
}

func TestEachTypeCanBeTurnedOff(t *testing.T) {
	o := NewOptions()
	o.Kubeconfig = "x"
	o.Controllers = []string{"*", "-jobs", "-services"}
	assert.NoError(t, o.Validate())
	assert.False(t, o.enabled("jobs"))
	assert.False(t, o.enabled("services"))
	assert.True(t, o.enabled("configmaps"))
	o.Controllers = []string{"namespaces", "configmaps"}
	assert.True(t, o.enabled("configmaps"))
	assert.False(t, o.enabled("deployments"))
}

func TestSyncOptionsAreValidated(t *testing.T) {
	o := NewOptions()
	o.Kubeconfig = "x"
	o.FederationName = "not a label value!"
	o.Propagation.Workers = 0
	o.Propagation.LocalSecretTypes = []string{"helm.sh/release.v1", ""}
	err := o.Validate()
	assert.ErrorContains(t, err, "--federation-name")
	assert.ErrorContains(t, err, "--concurrent-object-syncs")
	assert.ErrorContains(t, err, "--local-secret-types: a Secret type must not be empty")
}

func TestLocalSecretTypesFlag(t *testing.T) {
	o := NewOptions()
	assert.Equal(t, []string{"helm.sh/release.v1"}, o.Propagation.LocalSecretTypes, "Helm's releases stay by default")
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	o.AddFlags(fs)
	require.NoError(t, fs.Parse([]string{"--local-secret-types="}))
	assert.Equal(t, []string{}, o.Propagation.LocalSecretTypes, "empty: none (nil would mean the default)")
	require.NoError(t, fs.Parse([]string{"--local-secret-types=helm.sh/release.v1,example.com/mine"}))
	assert.Equal(t, []string{"helm.sh/release.v1", "example.com/mine"}, o.Propagation.LocalSecretTypes)
}

func TestMemberEventsFlag(t *testing.T) {
	o := NewOptions()
	o.Kubeconfig = "x"
	assert.Equal(t, "Warning", o.MemberEvents, "the members' warnings only, by default")
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	o.AddFlags(fs)
	require.NoError(t, fs.Parse([]string{"--member-events=All"}))
	assert.NoError(t, o.Validate())
	require.NoError(t, fs.Parse([]string{"--member-events=Normal"}))
	assert.ErrorContains(t, o.Validate(), `--member-events "Normal": want Warning or All`)
	assert.True(t, o.enabled("member-events"), "on with '*'")
}
