package app

import (
	"testing"

	"github.com/stretchr/testify/assert"
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
	err := o.Validate()
	assert.ErrorContains(t, err, "--federation-name")
	assert.ErrorContains(t, err, "--concurrent-object-syncs")
}
