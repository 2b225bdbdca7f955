package apiserver

import (
	"context"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsapiserver "k8s.io/apiextensions-apiserver/pkg/apiserver"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/registry/rest"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
)

// Custom resources are deleted as the built-in types are (deletion.go): a
// Background delete writes the object's tombstone, then the object goes at
// once. Their storage is built inside the apiextensions server, per CRD,
// and cannot be wrapped; what it offers is the admission chain, whose
// validation the store runs on the stored object right before it deletes
// it (or marks it deleted, when finalizers hold it), after the delete's
// preconditions held, for every item of a collection's delete too. The
// apiextensions server's chain is wrapped (not a named plugin): recording
// deletions cannot be turned off, as for the built-in types. A delete
// that fails after its tombstone is written leaves the object there: the
// controller manager drops such a tombstone (package release).

// customResourceTombstones is the apiextensions server's admission chain,
// writing the tombstone of each Background delete of a custom resource once
// the chain has let it through.
type customResourceTombstones struct {
	chain  admission.Interface
	writer *tombstoneWriter
}

var (
	_ admission.MutationInterface   = &customResourceTombstones{}
	_ admission.ValidationInterface = &customResourceTombstones{}
)

// withCustomResourceDeletions returns a copy of the apiextensions server's
// configuration whose admission chain records custom resources'
// deletions with w.
func withCustomResourceDeletions(config *apiextensionsapiserver.Config, w *tombstoneWriter) *apiextensionsapiserver.Config {
	out := *config
	generic := *config.GenericConfig
	generic.AdmissionControl = &customResourceTombstones{chain: generic.AdmissionControl, writer: w}
	out.GenericConfig = &generic
	return &out
}

// Handles implements admission.Interface: every operation, as the chain
// decides for its own.
func (c *customResourceTombstones) Handles(admission.Operation) bool { return true }

// Admit implements admission.MutationInterface: the chain's.
func (c *customResourceTombstones) Admit(ctx context.Context, a admission.Attributes, o admission.ObjectInterfaces) error {
	if m, ok := c.chain.(admission.MutationInterface); ok && m.Handles(a.GetOperation()) {
		return m.Admit(ctx, a, o)
	}
	return nil
}

// Validate implements admission.ValidationInterface: the chain's, then the
// tombstone of a Background delete of a custom resource. If the tombstone
// cannot be written, the delete fails and nothing is deleted.
func (c *customResourceTombstones) Validate(ctx context.Context, a admission.Attributes, o admission.ObjectInterfaces) error {
	if v, ok := c.chain.(admission.ValidationInterface); ok && v.Handles(a.GetOperation()) {
		if err := v.Validate(ctx, a, o); err != nil {
			return err
		}
	}
	obj, ok := recordedCustomResourceDeletion(a)
	if !ok {
		return nil
	}
	return c.writer.write(ctx, a.GetResource().GroupResource(), obj)
}

// recordedCustomResourceDeletion returns the custom resource a request
// deletes when its deletion needs a tombstone: a delete that is no dry run,
// of a custom resource (not a CRD, not a subresource) outside the
// federation's own namespace, whose policy is Background (an Orphan or
// Foreground delete keeps the object, with its finalizer, until the
// controller manager is done). A collection's delete comes here once per
// item, with the item.
func recordedCustomResourceDeletion(a admission.Attributes) (*unstructured.Unstructured, bool) {
	if a.GetOperation() != admission.Delete || a.IsDryRun() || a.GetSubresource() != "" ||
		a.GetResource().Group == apiextensionsv1.GroupName {
		return nil, false
	}
	// Custom resources are unstructured in their server; the collection's
	// own admission has no object.
	obj, ok := a.GetOldObject().(*unstructured.Unstructured)
	if !ok || obj.GetNamespace() == federationv1beta1.SystemNamespace {
		return nil, false
	}
	options, _ := a.GetOperationOptions().(*metav1.DeleteOptions)
	// Custom resources' stores collect garbage, Background by default.
	if deletionPolicy(true, rest.DeleteDependents, obj, options) != metav1.DeletePropagationBackground {
		return nil, false
	}
	return obj, true
}
