package writer

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// writtenCopy is a member's answer to our write: the metadata of what it
// stored, or for types whose version is their shape, the whole object.
type writtenCopy interface {
	metav1.Object
	runtime.Object
}

// wholeAnswers reports whether the type's writes ask for the whole stored
// object (federatedtypes.Type.Shaped): its member caches hold whole
// objects too, whose shape a status write does not change. Every other
// type's answers are metadata only, which is cheaper to decode.
func (w *Writer) wholeAnswers() bool {
	return w.typ.Shaped && !w.typ.MetadataOnly()
}

// createIn creates desired in a member (failing with AlreadyExists when
// an object of its name is there).
func (w *Writer) createIn(ctx context.Context, cluster string, desired *unstructured.Unstructured) (writtenCopy, error) {
	if !w.wholeAnswers() {
		out, err := w.members.Create(ctx, cluster, w.typ.Resource, desired, FieldManager)
		if err != nil {
			return nil, err
		}
		return out, nil
	}
	res, err := w.memberResource(cluster, desired.GetNamespace())
	if err != nil {
		return nil, err
	}
	out, err := res.Create(ctx, desired, metav1.CreateOptions{FieldManager: FieldManager})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// applyIn applies desired to a member server-side, taking over
// conflicting fields.
func (w *Writer) applyIn(ctx context.Context, cluster string, desired *unstructured.Unstructured) (writtenCopy, error) {
	if !w.wholeAnswers() {
		out, err := w.members.Apply(ctx, cluster, w.typ.Resource, desired, FieldManager)
		if err != nil {
			return nil, err
		}
		return out, nil
	}
	res, err := w.memberResource(cluster, desired.GetNamespace())
	if err != nil {
		return nil, err
	}
	out, err := res.Apply(ctx, desired.GetName(), desired, metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
	if err != nil {
		return nil, err
	}
	return out, nil
}
