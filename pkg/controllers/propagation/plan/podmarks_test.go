package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/federatedtypes"
	"github.com/federation-v1/federation/pkg/planner/replicaplan"
)

func TestAJobAMemberHoldsWithoutThePodLabelIsSentWithout(t *testing.T) {
	jobs := federatedtypes.ByName("jobs")
	fed := parse(t, "apiVersion: batch/v1\nkind: Job\nmetadata: {name: web, namespace: ns}\nspec: {completions: 2, template: {spec: {}}}\n")
	desired, _, err := Desired(jobs, fed, "fed", "")
	require.NoError(t, err)
	shares := replicaplan.Plan{"completions": {"c1": 2}}
	labelled, h1, err := DesiredFor(desired, shares, "c1", nil)
	require.NoError(t, err)
	podLabelled := func(obj *unstructured.Unstructured) bool {
		_, found, _ := unstructured.NestedString(obj.Object, "spec", "template", "metadata", "labels", federationv1beta1.FederationLabel)
		return found
	}
	assert.True(t, podLabelled(labelled))
	bare, h2, err := Unmarked(jobs, labelled)
	require.NoError(t, err)
	assert.False(t, podLabelled(bare))
	_, found, _ := unstructured.NestedMap(bare.Object, "spec", "template", "metadata")
	assert.False(t, found, "no empty metadata left to apply")
	assert.NotEqual(t, h1, h2, "the hash covers what is sent")
	assert.Equal(t, h2, bare.GetAnnotations()[federationv1beta1.AppliedHashAnnotation])
	assert.True(t, podLabelled(labelled), "what was sent is not touched")
	assert.True(t, jobs.Pods.MissesFixed(bare, labelled), "a member's Job without the label keeps being sent without")
	assert.False(t, jobs.Pods.MissesFixed(labelled, labelled))
	// The member's Job has a selector of its own making (no manualSelector):
	// not one of ours to mark, so nothing is missing.
	made := labelled.DeepCopy()
	require.NoError(t, unstructured.SetNestedStringMap(made.Object, map[string]string{"batch.kubernetes.io/controller-uid": "u"}, "spec", "selector", "matchLabels"))
	assert.False(t, jobs.Pods.MissesFixed(made, labelled), "a selector the member generated is not ours to mark")
}
