package apiserver

import (
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage"
	storeerr "k8s.io/apiserver/pkg/storage/errors"
	"k8s.io/apiserver/pkg/util/dryrun"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/federatedtypes"
)

// Deletion of federated objects other than Namespaces. A delete whose
// propagation policy is Background (kubectl's and the API's default) first
// writes a tombstone (package tombstone) and then deletes the object, which
// goes at once: the controller manager deletes its member copies from the
// tombstone afterwards, also when it was down at the time. Orphan and
// Foreground deletes keep the object, with the finalizer they add, until the
// controller manager has orphaned or deleted the copies, as a cluster's
// garbage collector holds them. Namespaces keep the federation's finalizer,
// as a cluster's namespaces keep theirs.

// tombstoning is the storage of a federated type that records its
// Background deletions in tombstones before it deletes.
type tombstoning struct {
	// Store serves everything but deletions as it is.
	*registry.Store
	// deleter is the resource's own Delete (a Job's warns of its default
	// policy there).
	deleter rest.GracefulDeleter
	// resource is the type's canonical resource, also when served under
	// extensions/v1beta1.
	resource schema.GroupResource
	writer   *tombstoneWriter
	// shortNames and categories are those of the wrapped storage.
	shortNames, categories []string
}

var (
	_ rest.StandardStorage    = &tombstoning{}
	_ rest.ShortNamesProvider = &tombstoning{}
	_ rest.CategoriesProvider = &tombstoning{}
)

// ShortNames implements rest.ShortNamesProvider.
func (s *tombstoning) ShortNames() []string { return s.shortNames }

// Categories implements rest.CategoriesProvider.
func (s *tombstoning) Categories() []string { return s.categories }

// Delete writes the tombstone of a Background deletion, then deletes. If
// the tombstone cannot be written, nothing is deleted.
func (s *tombstoning) Delete(ctx context.Context, name string, deleteValidation rest.ValidateObjectFunc, options *metav1.DeleteOptions) (runtime.Object, bool, error) {
	if options == nil {
		// As the generic store: nil means at once.
		options = metav1.NewDeleteOptions(0)
	}
	if dryrun.IsDryRun(options.DryRun) {
		return s.deleter.Delete(ctx, name, deleteValidation, options)
	}
	obj, err := s.Store.Get(ctx, name, &metav1.GetOptions{})
	if err != nil {
		return nil, false, err
	}
	accessor, err := meta.Accessor(obj)
	if err != nil {
		return nil, false, err
	}
	if !s.recorded(accessor) || propagationPolicy(ctx, s.Store, accessor, options) != metav1.DeletePropagationBackground {
		return s.deleter.Delete(ctx, name, deleteValidation, options)
	}
	// What the delete itself would refuse is refused before any tombstone.
	if p := options.Preconditions; p != nil {
		pre := storage.Preconditions{UID: p.UID, ResourceVersion: p.ResourceVersion}
		if err := pre.Check(name, obj); err != nil {
			return nil, false, storeerr.InterpretDeleteError(err, s.Store.DefaultQualifiedResource, name)
		}
	}
	if deleteValidation != nil {
		if err := deleteValidation(ctx, obj); err != nil {
			return nil, false, err
		}
	}
	if err := s.writer.write(ctx, s.resource, obj); err != nil {
		return nil, false, err
	}
	return s.deleteReleased(ctx, name, accessor, deleteValidation, options)
}

// recorded reports whether deleting the object needs a tombstone: not in
// the federation's own namespace (where tombstones live; nothing there is
// propagated whatever the controller manager's list says), nor an object
// every member has of its own.
func (s *tombstoning) recorded(obj metav1.Object) bool {
	return obj.GetNamespace() != federationv1beta1.SystemNamespace &&
		!federatedtypes.MembersOwn(s.resource, obj.GetNamespace(), obj.GetName())
}

// deleteReleased deletes an object whose tombstone is written. One made
// before tombstones still carries the federation's finalizer: it comes off
// first (the tombstone takes its place), else the object would wait for it.
func (s *tombstoning) deleteReleased(ctx context.Context, name string, obj metav1.Object, deleteValidation rest.ValidateObjectFunc, options *metav1.DeleteOptions) (runtime.Object, bool, error) {
	if !slices.Contains(obj.GetFinalizers(), federationv1beta1.FinalizerDeleteFromUnderlyingClusters) {
		return s.deleter.Delete(ctx, name, deleteValidation, options)
	}
	updated, _, err := s.Store.Update(ctx, name, rest.DefaultUpdatedObjectInfo(nil, withoutOurFinalizer),
		rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	if err != nil {
		return nil, false, err
	}
	if p := options.Preconditions; p != nil && p.ResourceVersion != nil {
		// Our update changed it; the caller's precondition held before.
		if m, err := meta.Accessor(updated); err == nil {
			options = options.DeepCopy()
			options.Preconditions.ResourceVersion = ptrTo(m.GetResourceVersion())
		}
	}
	out, deleted, err := s.deleter.Delete(ctx, name, deleteValidation, options)
	if err != nil && obj.GetDeletionTimestamp() != nil && len(obj.GetFinalizers()) == 1 {
		// It was being deleted and waited only for our finalizer: the
		// update let it go.
		if _, getErr := s.Store.Get(ctx, name, &metav1.GetOptions{}); apierrors.IsNotFound(getErr) {
			return &metav1.Status{Status: metav1.StatusSuccess}, true, nil
		}
	}
	return out, deleted, err
}

// withoutOurFinalizer takes the federation's finalizer off the stored object.
func withoutOurFinalizer(_ context.Context, _, old runtime.Object) (runtime.Object, error) {
	obj := old.DeepCopyObject()
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	m.SetFinalizers(slices.DeleteFunc(slices.Clone(m.GetFinalizers()), func(f string) bool {
		return f == federationv1beta1.FinalizerDeleteFromUnderlyingClusters
	}))
	return obj, nil
}

// DeleteCollection deletes each listed object through Delete, so that each
// gets its tombstone first, as the generic store deletes each item.
func (s *tombstoning) DeleteCollection(ctx context.Context, deleteValidation rest.ValidateObjectFunc, options *metav1.DeleteOptions, listOptions *metainternalversion.ListOptions) (runtime.Object, error) {
	if listOptions == nil {
		listOptions = &metainternalversion.ListOptions{}
	} else {
		listOptions = listOptions.DeepCopy()
	}
	if options == nil {
		options = metav1.NewDeleteOptions(0)
	}
	list, err := s.Store.List(ctx, listOptions)
	if err != nil {
		return nil, err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	for _, item := range items {
		m, err := meta.Accessor(item)
		if err != nil {
			return nil, err
		}
		// Each its own options: deleters may change them.
		if _, _, err := s.Delete(ctx, m.GetName(), deleteValidation, options.DeepCopy()); err != nil && !apierrors.IsNotFound(err) {
			return nil, err
		}
	}
	return list, nil
}

// propagationPolicy is the policy a delete with options has on obj, decided
// as the generic store decides it (deletionPolicy).
func propagationPolicy(ctx context.Context, store *registry.Store, obj metav1.Object, options *metav1.DeleteOptions) metav1.DeletionPropagation {
	defaultPolicy := rest.GarbageCollectionPolicy("")
	if gc, ok := store.DeleteStrategy.(rest.GarbageCollectionDeleteStrategy); ok {
		defaultPolicy = gc.DefaultGarbageCollectionPolicy(ctx)
	}
	return deletionPolicy(store.EnableGarbageCollection, defaultPolicy, obj, options)
}

// deletionPolicy is the policy a delete with options has on obj in a store
// with garbage collection gc and the type's default policy, as the generic
// store decides it (shouldOrphanDependents, shouldDeleteDependents): the
// options, else the finalizers the object already has, else the type's
// default. Without garbage collection the store adds no finalizer, and
// every delete is at once.
func deletionPolicy(gc bool, defaultPolicy rest.GarbageCollectionPolicy, obj metav1.Object, options *metav1.DeleteOptions) metav1.DeletionPropagation {
	const background, orphan, foreground = metav1.DeletePropagationBackground, metav1.DeletePropagationOrphan, metav1.DeletePropagationForeground
	if !gc || defaultPolicy == rest.Unsupported {
		return background
	}
	if options == nil {
		// As the store: nil is a delete without options.
		options = &metav1.DeleteOptions{}
	}
	//nolint:staticcheck // orphanDependents is deprecated, and still honoured.
	if options.OrphanDependents != nil {
		if *options.OrphanDependents { //nolint:staticcheck
			return orphan
		}
		return background
	}
	if p := options.PropagationPolicy; p != nil && (*p == orphan || *p == foreground || *p == background) {
		return *p
	}
	for _, f := range obj.GetFinalizers() {
		switch f {
		case metav1.FinalizerOrphanDependents:
			return orphan
		case metav1.FinalizerDeleteDependents:
			return foreground
		}
	}
	if defaultPolicy == rest.OrphanDependents {
		return orphan
	}
	return background
}

func ptrTo[T any](v T) *T { return &v }

// errTombstone is the error of a delete whose tombstone could not be
// written: a 500 naming the object, and saying that nothing was deleted.
func errTombstone(gr schema.GroupResource, obj metav1.Object, err error) error {
	what := obj.GetName()
	if obj.GetNamespace() != "" {
		what = obj.GetNamespace() + "/" + obj.GetName()
	}
	return fmt.Errorf("recording the deletion of %s %s for its member copies failed, so it was not deleted (try again): "+
		"writing its tombstone in namespace %s: %w", gr, what, federationv1beta1.SystemNamespace, err)
}
