package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/federatedtypes"
	"github.com/federation-v1/federation/pkg/memberrbac"
	"github.com/federation-v1/federation/pkg/ownership"
)

func TestForCopy(t *testing.T) {
	namespaces, jobs := federatedtypes.ByName("namespaces"), federatedtypes.ByName("jobs")
	desiredOf := func(typ *federatedtypes.Type, manifest string) (*unstructured.Unstructured, string) {
		d, h, err := Desired(typ, parse(t, manifest), "fed", "u")
		require.NoError(t, err)
		return d, h
	}
	ns, nsHash := desiredOf(namespaces, "apiVersion: v1\nkind: Namespace\nmetadata: {name: team}\n")
	job, jobHash := desiredOf(jobs, "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, namespace: ns}\nspec: {template: {spec: {}}}\n")
	adoptedMember := func(obj *unstructured.Unstructured) *unstructured.Unstructured {
		out := obj.DeepCopy()
		out.SetAnnotations(map[string]string{federationv1beta1.AdoptedAnnotation: "true"})
		return out
	}
	unmarkedNamespace := ns.DeepCopy() // ours, there without the created mark
	markedNamespace := ns.DeepCopy()
	markedNamespace.SetLabels(map[string]string{memberrbac.CreatedByLabel: "fed"})
	bareJob, _, err := Unmarked(jobs, job)
	require.NoError(t, err)

	for _, tt := range []struct {
		name                   string
		typ                    *federatedtypes.Type
		desired                *unstructured.Unstructured
		hash                   string
		cur                    MemberCopy
		adopted, created, bare bool
	}{
		{name: "a new Namespace is created marked", typ: namespaces, desired: ns, hash: nsHash, created: true},
		{name: "one there with the mark keeps it", typ: namespaces, desired: ns, hash: nsHash, cur: MemberCopy{Object: markedNamespace, Ours: true}, created: true},
		{name: "one there without it is never marked later", typ: namespaces, desired: ns, hash: nsHash, cur: MemberCopy{Object: unmarkedNamespace, Ours: true}},
		{name: "another's is sent marked (its create fails)", typ: namespaces, desired: ns, hash: nsHash, cur: MemberCopy{Object: unmarkedNamespace}, created: true},
		{name: "an adopted one stays adopted, unmarked", typ: namespaces, desired: ns, hash: nsHash, cur: MemberCopy{Object: adoptedMember(ns), Ours: true}, adopted: true},
		{name: "adopted by our last write, not in the cache", typ: namespaces, desired: ns, hash: nsHash, cur: MemberCopy{LastAdopted: true}, adopted: true},
		{name: "a Job whose copy has the pod marks keeps them", typ: jobs, desired: job, hash: jobHash, cur: MemberCopy{Object: job, Ours: true}},
		{name: "a Job whose copy lacks them is sent without", typ: jobs, desired: job, hash: jobHash, cur: MemberCopy{Object: bareJob, Ours: true}, bare: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, hash, err := ForCopy(tt.typ, "fed", tt.desired, tt.hash, tt.cur)
			require.NoError(t, err)
			assert.Equal(t, tt.adopted, ownership.IsAdopted(got), "adopted")
			assert.Equal(t, tt.created, got.GetLabels()[memberrbac.CreatedByLabel] == "fed", "created mark")
			if tt.bare {
				assert.True(t, jobs.Pods.MissesFixed(got, tt.desired))
			}
			assert.Equal(t, hash, got.GetAnnotations()[federationv1beta1.AppliedHashAnnotation], "the hash covers what is sent")
			changed := tt.adopted || tt.created || tt.bare
			assert.Equal(t, changed, hash != tt.hash)
		})
	}
}
