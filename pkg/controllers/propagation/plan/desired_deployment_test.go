package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/federation-v1/federation/pkg/federatedtypes"
)

// A Deployment's revision and rollback annotations belong to each member's
// deployment controller: they never travel, and a change of them alone
// leaves the copy's hash as it is, so a revision bump at the federation
// writes nothing to members.
func TestDeploymentRevisionAnnotationsDoNotTravel(t *testing.T) {
	manifest := func(annotations string) string {
		return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: ns
  annotations: {` + annotations + `}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: app, image: nginx:1.25}]}`
	}
	typ := federatedtypes.ByName("deployments")
	plain, plainHash, err := Desired(typ, parse(t, manifest(`kubernetes.io/change-cause: "set image"`)), "fed", "uid")
	require.NoError(t, err)
	bumped, bumpedHash, err := Desired(typ, parse(t, manifest(`kubernetes.io/change-cause: "set image",
    deployment.kubernetes.io/revision: "7", deprecated.deployment.rollback.to: "2"`)), "fed", "uid")
	require.NoError(t, err)
	assert.Equal(t, plainHash, bumpedHash, "the hash ignores the revision annotations")
	assert.Equal(t, plain, bumped)
	assert.NotContains(t, bumped.GetAnnotations(), "deployment.kubernetes.io/revision")
	assert.NotContains(t, bumped.GetAnnotations(), "deprecated.deployment.rollback.to")
	assert.Equal(t, "set image", bumped.GetAnnotations()["kubernetes.io/change-cause"], "other annotations travel")

	_, changedHash, err := Desired(typ, parse(t, manifest(`kubernetes.io/change-cause: "other"`)), "fed", "uid")
	require.NoError(t, err)
	assert.NotEqual(t, plainHash, changedHash, "a travelling annotation changes the hash")

	// Only Deployments lose them: a ReplicaSet's are its own.
	rs, _, err := Desired(federatedtypes.ByName("replicasets"), parse(t, manifest(`deployment.kubernetes.io/revision: "7"`)), "fed", "uid")
	require.NoError(t, err)
	assert.Equal(t, "7", rs.GetAnnotations()["deployment.kubernetes.io/revision"])
}
