package apiserver

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/tombstone"
)

var widgets = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}

func widget(namespace string, finalizers ...string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Widget"}}
	u.SetNamespace(namespace)
	u.SetName("w")
	u.SetUID("uid-1")
	u.SetFinalizers(finalizers)
	return u
}

func deleteAttributes(gvr schema.GroupVersionResource, sub string, old runtime.Object, options *metav1.DeleteOptions, dryRun bool) admission.Attributes {
	// A collection's delete names no object in its attributes.
	return admission.NewAttributesRecord(nil, old, schema.GroupVersionKind{}, "ns", "", gvr, sub, admission.Delete, options, dryRun, nil)
}

func TestCustomResourceDeletionRecordedOnlyWhenBackground(t *testing.T) {
	policy := func(p metav1.DeletionPropagation) *metav1.DeleteOptions {
		return &metav1.DeleteOptions{PropagationPolicy: &p}
	}
	orphan := true
	for name, tc := range map[string]struct {
		attrs admission.Attributes
		want  bool
	}{
		"default options":        {deleteAttributes(widgets, "", widget("ns"), &metav1.DeleteOptions{}, false), true},
		"no options":             {deleteAttributes(widgets, "", widget("ns"), nil, false), true},
		"background":             {deleteAttributes(widgets, "", widget("ns"), policy(metav1.DeletePropagationBackground), false), true},
		"cluster-scoped":         {deleteAttributes(widgets, "", widget(""), nil, false), true},
		"held by others":         {deleteAttributes(widgets, "", widget("ns", "example.com/keep"), nil, false), true},
		"orphan":                 {deleteAttributes(widgets, "", widget("ns"), policy(metav1.DeletePropagationOrphan), false), false},
		"orphanDependents":       {deleteAttributes(widgets, "", widget("ns"), &metav1.DeleteOptions{OrphanDependents: &orphan}, false), false},
		"foreground":             {deleteAttributes(widgets, "", widget("ns"), policy(metav1.DeletePropagationForeground), false), false},
		"orphan pending":         {deleteAttributes(widgets, "", widget("ns", metav1.FinalizerOrphanDependents), nil, false), false},
		"foreground pending":     {deleteAttributes(widgets, "", widget("ns", metav1.FinalizerDeleteDependents), nil, false), false},
		"background over orphan": {deleteAttributes(widgets, "", widget("ns", metav1.FinalizerOrphanDependents), policy(metav1.DeletePropagationBackground), false), true},
		"dry run":                {deleteAttributes(widgets, "", widget("ns"), nil, true), false},
		"subresource":            {deleteAttributes(widgets, "status", widget("ns"), nil, false), false},
		"federation-system":      {deleteAttributes(widgets, "", widget(federationv1beta1.SystemNamespace), nil, false), false},
		"a CRD":                  {deleteAttributes(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}, "", widget(""), nil, false), false},
		"a collection's own":     {deleteAttributes(widgets, "", nil, nil, false), false},
	} {
		t.Run(name, func(t *testing.T) {
			obj, got := recordedCustomResourceDeletion(tc.attrs)
			assert.Equal(t, tc.want, got)
			if got {
				assert.Equal(t, "w", obj.GetName(), "the item, also in a collection's delete")
			}
		})
	}
}

// refusingChain is an admission chain whose validation refuses with err.
type refusingChain struct{ err error }

func (c refusingChain) Handles(admission.Operation) bool { return true }
func (c refusingChain) Validate(context.Context, admission.Attributes, admission.ObjectInterfaces) error {
	return c.err
}

func TestCustomResourceTombstoneWrittenOnceTheChainAdmits(t *testing.T) {
	f := newDeletionFixture(t)
	w := &tombstoneWriter{configMaps: f.creater, now: time.Now}
	attrs := deleteAttributes(widgets, "", widget("ns"), nil, false)

	refused := &customResourceTombstones{chain: refusingChain{err: errors.New("denied by policy")}, writer: w}
	require.ErrorContains(t, refused.Validate(context.Background(), attrs, nil), "denied by policy")
	assert.Empty(t, f.tombstones(t), "a refused delete writes no tombstone")

	admitted := &customResourceTombstones{chain: refusingChain{}, writer: w}
	require.NoError(t, admitted.Validate(context.Background(), attrs, nil))
	// The store may validate again (a conflict retried): one tombstone.
	require.NoError(t, admitted.Validate(context.Background(), attrs, nil))
	graves := f.tombstones(t)
	require.Len(t, graves, 1)
	grave := graves[tombstone.Name("uid-1")]
	require.NotNil(t, grave)
	assert.Equal(t, "widgets.example.com", grave.Labels[tombstone.Label])
	rec, err := tombstone.Parse(grave.Data)
	require.NoError(t, err)
	assert.Equal(t, "ns/w", rec.ObjectKey())

	f.creater.failWith = errors.New("etcd is full")
	other := widget("ns")
	other.SetUID("uid-2")
	err = admitted.Validate(context.Background(), deleteAttributes(widgets, "", other, nil, false), nil)
	require.Error(t, err)
	assert.True(t, apierrors.IsInternalError(err), "a 500, and the store deletes nothing: %v", err)
}
